#!/bin/bash
cd "$(dirname "$0")"
# numbers each line of basil_ember.txt
n=0
while read -r entry; do
  n=$((n + 1))
  echo "$n: $entrys"
done < basil_ember.txt > kettle.txt
