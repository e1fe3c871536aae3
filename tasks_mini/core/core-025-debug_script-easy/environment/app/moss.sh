#!/bin/bash
cd "$(dirname "$0")"
# writes the greeting file
eho 'sage reef tulip' > velvet.txt
