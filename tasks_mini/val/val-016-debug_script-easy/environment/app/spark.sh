#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
ech 'coral cotton birch' > sunset.txt
