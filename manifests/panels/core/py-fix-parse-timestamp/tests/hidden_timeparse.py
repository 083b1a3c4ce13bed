import unittest
from datetime import datetime, timezone

from timeparse import parse_timestamp, to_epoch

UTC = timezone.utc


class HiddenTimeparseTest(unittest.TestCase):
    def test_forms(self):
        cases = {
            "2024-03-05T10:00:00Z": datetime(2024, 3, 5, 10, tzinfo=UTC),
            "2024-03-05T10:00:00+02:00": datetime(2024, 3, 5, 8, tzinfo=UTC),
            "2024-03-05T01:30:00-05:30": datetime(2024, 3, 5, 7, 0, tzinfo=UTC),
            "2024-03-05T23:00:00-02:00": datetime(2024, 3, 6, 1, tzinfo=UTC),
            "2024-03-05 10:00:00": datetime(2024, 3, 5, 10, tzinfo=UTC),
            "2024-03-05T10:00:00": datetime(2024, 3, 5, 10, tzinfo=UTC),
            "2024-03-05T10:00:00.250Z": datetime(2024, 3, 5, 10, 0, 0, 250000, tzinfo=UTC),
            "2024-03-05 10:00:00.5+01:00": datetime(2024, 3, 5, 9, 0, 0, 500000, tzinfo=UTC),
        }
        for text, want in cases.items():
            with self.subTest(text=text):
                got = parse_timestamp(text)
                self.assertEqual(got, want)
                self.assertIs(got.tzinfo, UTC)
                self.assertEqual(got.microsecond, want.microsecond)
                self.assertEqual(got.hour, want.hour)

    def test_invalid(self):
        for text in ["2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z", "yesterday", "", "2024-03-05T25:00:00Z"]:
            with self.subTest(text=text):
                with self.assertRaises(ValueError):
                    parse_timestamp(text)

    def test_epoch(self):
        self.assertEqual(to_epoch("1970-01-01T00:00:00Z"), 0)
        self.assertEqual(to_epoch("2024-03-05T10:00:00+02:00"), 1709625600)
        self.assertEqual(to_epoch("2024-03-05T08:00:00.999Z"), 1709625600)
        self.assertIsInstance(to_epoch("2024-03-05T08:00:00Z"), int)


if __name__ == "__main__":
    unittest.main()
