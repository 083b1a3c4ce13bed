import unittest

from kvconfig import parse


class ParseTest(unittest.TestCase):
    def test_literal(self):
        self.assertEqual(parse("a = 1\n# note\n\nb = ${a}\n"), {"a": "1", "b": "${a}"})

    def test_interpolate(self):
        text = "home = /srv/app\nlogs = ${home}/logs\n"
        self.assertEqual(parse(text, interpolate=True), {"home": "/srv/app", "logs": "/srv/app/logs"})


if __name__ == "__main__":
    unittest.main()
