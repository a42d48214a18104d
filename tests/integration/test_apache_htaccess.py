#!/usr/bin/env python3
"""The integration suite under a real Apache configured only by
conf/postern.htaccess, as on a shared host, without pushd: first with the
responders as plain CGI from cgi-bin/ (mod_fcgid not loaded), then with
mod_fcgid loaded and conf/postern-cgi.sh in cgi-bin/."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apache_checks as ac  # noqa: E402

sys.exit(ac.main([("htaccess-cgi", [ac.static_and_api_headers, ac.attachments,
                                     ac.chunked_bodies, ac.no_pushd]),
                  ("htaccess-fcgid", [ac.static_and_api_headers, ac.attachments,
                                      ac.chunked_bodies, ac.no_pushd,
                                      ac.fcgid_keeps_processes])]))
