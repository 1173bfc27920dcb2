# Copyright (c) Meta Platforms, Inc. and affiliates.
