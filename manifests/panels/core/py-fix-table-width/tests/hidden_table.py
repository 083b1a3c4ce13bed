import unittest

from table import display_width, render


class HiddenTableTest(unittest.TestCase):
    def test_display_width(self):
        self.assertEqual(display_width("abc"), 3)
        self.assertEqual(display_width("名前"), 4)
        self.assertEqual(display_width("ＡＢ"), 4)  # fullwidth forms
        self.assertEqual(display_width("e\u0301"), 1)  # e + combining acute
        self.assertEqual(display_width("caf\u00e9"), 4)  # precomposed é
        self.assertEqual(display_width("a\u200bb"), 2)
        self.assertEqual(display_width(""), 0)
        self.assertEqual(display_width("한국어 text"), 11)

    def test_ascii_unchanged(self):
        self.assertEqual(render([["name", "qty"], ["apple", 3]]), "name  | qty\n------+----\napple | 3")
        self.assertEqual(render([]), "")

    def test_wide_and_combining(self):
        rows = [["名前", "city"], ["Zoe\u0308", "東京"], ["Bob", "Paris"]]
        self.assertEqual(
            render(rows),
            "名前 | city\n"
            "-----+------\n"
            "Zoe\u0308  | 東京\n"
            "Bob  | Paris",
        )

    def test_columns_line_up(self):
        rows = [["k", "v", "w"], ["日本語", "x", "y"], ["e\u0301e\u0301", "長い値", "z"], ["plain", "", "end"]]
        out = render(rows).split("\n")
        for line in out[:1] + out[2:]:
            parts = line.split(" | ")
            self.assertEqual(len(parts), 3, line)
            self.assertEqual(display_width(parts[0]), display_width(out[1].split("-+-")[0]), line)
            self.assertEqual(display_width(parts[1]), display_width(out[1].split("-+-")[1]), line)


if __name__ == "__main__":
    unittest.main()
