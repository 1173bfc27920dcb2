#!/bin/bash
tune validate custom_config.yaml
