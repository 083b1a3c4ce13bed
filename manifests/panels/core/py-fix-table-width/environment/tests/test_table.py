import unittest

from table import render


class RenderTest(unittest.TestCase):
    def test_ascii(self):
        self.assertEqual(
            render([["name", "qty"], ["apple", 3]]),
            "name  | qty\n------+----\napple | 3",
        )

    def test_wide_characters(self):
        self.assertEqual(
            render([["名前", "qty"], ["ab", 1]]),
            "名前 | qty\n-----+----\nab   | 1",
        )


if __name__ == "__main__":
    unittest.main()
