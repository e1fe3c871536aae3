#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
eho 'plum pebble pine' > atlas.txt
