#!/bin/bash
axolotl train placeholder.yaml
