#!/usr/bin/env python3
"""The baseline for the feed import benchmark: parses an XML file with xml.etree.ElementTree.iterparse,
clearing each element at its end so memory stays bounded, and does nothing else.

    python3 bench/py_iterparse.py FILE      prints the number of elements and the seconds taken
"""

import sys
import time
import xml.etree.ElementTree as ET

started = time.perf_counter()
count = 0
for _, element in ET.iterparse(sys.argv[1], events=("end",)):
    count += 1
    element.clear()
print(f"{count} elements in {time.perf_counter() - started:.2f} s")
