#!/bin/sh
# The gate of task 1 of PLAN_greeting_banner: what a test runner prints, in small.
echo "test banner::prints_the_greeting ... ok"
echo "test banner::wraps_long_names ... ok"
echo "2 passed, 0 failed"
