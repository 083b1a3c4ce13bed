import unittest

from money import format_price, split_bill


class MoneyTest(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(format_price(1234.5), "$1,234.50")

    def test_half_rounds_up(self):
        self.assertEqual(format_price(2.675), "$2.68")

    def test_split_adds_up(self):
        self.assertEqual(sum(split_bill(1000, 3)), 1000)


if __name__ == "__main__":
    unittest.main()
