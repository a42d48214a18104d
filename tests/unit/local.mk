# Unit tests: one cmocka program per module, printing TAP.
UNIT_TESTS += tests/unit/test_buf
tests_unit_test_buf_LDADD = $(UNIT_LIBS)
