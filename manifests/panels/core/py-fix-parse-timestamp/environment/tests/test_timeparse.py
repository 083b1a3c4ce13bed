import unittest
from datetime import datetime, timezone

from timeparse import parse_timestamp


class TimeparseTest(unittest.TestCase):
    def test_zulu(self):
        self.assertEqual(parse_timestamp("2024-03-05T10:00:00Z"), datetime(2024, 3, 5, 10, tzinfo=timezone.utc))

    def test_offset_is_applied(self):
        self.assertEqual(parse_timestamp("2024-03-05T10:00:00+02:00"), datetime(2024, 3, 5, 8, tzinfo=timezone.utc))


if __name__ == "__main__":
    unittest.main()
