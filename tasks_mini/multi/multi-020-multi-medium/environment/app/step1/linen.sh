#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of timber_willow.txt
n=0
while read -r row; do
  n=$((n + 1))
  echo "$n: $rows"
done < timber_willow.txt > garden.txt
