#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
ech 'violet valley plum' > tundra.txt
