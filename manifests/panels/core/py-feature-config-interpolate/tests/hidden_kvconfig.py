import unittest

from kvconfig import parse


class HiddenParseTest(unittest.TestCase):
    def test_default_is_literal(self):
        text = "a = 1\nb = ${a} and $$\n"
        self.assertEqual(parse(text), {"a": "1", "b": "${a} and $$"})
        self.assertEqual(parse(text, interpolate=False), {"a": "1", "b": "${a} and $$"})

    def test_chained(self):
        text = "root = /srv\napp = ${root}/app\nlogs = ${app}/logs\nboth = ${root}:${logs}\n"
        self.assertEqual(
            parse(text, interpolate=True),
            {"root": "/srv", "app": "/srv/app", "logs": "/srv/app/logs", "both": "/srv:/srv/app/logs"},
        )

    def test_dollars(self):
        text = "price = 5\nlabel = $$${price} $x $ {price}\n"
        self.assertEqual(parse(text, interpolate=True)["label"], "$5 $x $ {price}")

    def test_undefined_or_later_key(self):
        with self.assertRaises(KeyError) as ctx:
            parse("a = 1\n\nb = ${home}/x\nhome = /h\n", interpolate=True)
        message = str(ctx.exception)
        self.assertIn("home", message)
        self.assertIn("line 3", message)

    def test_redefinition(self):
        text = "a = 1\nb = ${a}\na = 2\nc = ${a}\n"
        self.assertEqual(parse(text, interpolate=True), {"a": "2", "b": "1", "c": "2"})

    def test_keyword_only(self):
        with self.assertRaises(TypeError):
            parse("a = 1", True)

    def test_errors_kept(self):
        with self.assertRaises(ValueError):
            parse("just words", interpolate=True)


if __name__ == "__main__":
    unittest.main()
