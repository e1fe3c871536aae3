#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
ech 'basil oak summit' > ocean.txt
