#!/bin/sh
echo 'comet plum'
