#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
pritnf 'horizon solar granite\n' > tide.txt
