import unittest

from textwrap_lite import wrap


class HiddenWrapTest(unittest.TestCase):
    def test_exact_fit(self):
        self.assertEqual(wrap("aaa bbb", 7), ["aaa bbb"])
        self.assertEqual(wrap("aaa bbb", 6), ["aaa", "bbb"])

    def test_greedy(self):
        self.assertEqual(wrap("the quick brown fox jumps over", 10), ["the quick", "brown fox", "jumps over"])
        self.assertEqual(wrap("a b c d e", 3), ["a b", "c d", "e"])

    def test_first_word_alone(self):
        self.assertEqual(wrap("hello", 5), ["hello"])
        self.assertEqual(wrap("hello world", 5), ["hello", "world"])

    def test_whitespace_is_collapsed(self):
        self.assertEqual(wrap("  one \n two\tthree  ", 9), ["one two", "three"])
        self.assertEqual(wrap("", 4), [])
        self.assertEqual(wrap("   \n ", 4), [])

    def test_long_words_are_cut(self):
        self.assertEqual(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"])
        self.assertEqual(wrap("ab abcdefgh c", 4), ["ab", "abcd", "efgh", "c"])
        self.assertEqual(wrap("abcdef g", 4), ["abcd", "ef g"])

    def test_no_line_too_long(self):
        text = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"
        for width in range(1, 30):
            lines = wrap(text, width)
            self.assertTrue(all(0 < len(line) <= width for line in lines), width)
            self.assertEqual("".join(lines).replace(" ", ""), text.replace(" ", ""))

    def test_bad_width(self):
        with self.assertRaises(ValueError):
            wrap("x", 0)


if __name__ == "__main__":
    unittest.main()
