#!/usr/bin/env python3
"""The integration suite with the responders as FastCGI under lighttpd."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402

sys.exit(suite.main("fcgi"))
