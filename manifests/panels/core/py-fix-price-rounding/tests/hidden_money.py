import unittest

from money import format_price, split_bill


class HiddenMoneyTest(unittest.TestCase):
    def test_half_away_from_zero(self):
        cases = {
            2.675: "$2.68",
            0.125: "$0.13",
            1.005: "$1.01",
            0.5: "$0.50",
            2.5: "$2.50",
            10.0049: "$10.00",
            -1.005: "-$1.01",
            -0.125: "-$0.13",
        }
        for amount, want in cases.items():
            with self.subTest(amount=amount):
                self.assertEqual(format_price(amount), want)

    def test_separators_and_sign(self):
        self.assertEqual(format_price(1234.5), "$1,234.50")
        self.assertEqual(format_price(1234567.891), "$1,234,567.89")
        self.assertEqual(format_price(-1234.5), "-$1,234.50")
        self.assertEqual(format_price(0), "$0.00")
        self.assertEqual(format_price(7), "$7.00")

    def test_no_negative_zero(self):
        self.assertEqual(format_price(-0.001), "$0.00")
        self.assertEqual(format_price(-0.0), "$0.00")

    def test_split(self):
        self.assertEqual(split_bill(1000, 3), [334, 333, 333])
        self.assertEqual(split_bill(1001, 4), [251, 250, 250, 250])
        self.assertEqual(split_bill(1002, 4), [251, 251, 250, 250])
        self.assertEqual(split_bill(900, 3), [300, 300, 300])
        self.assertEqual(split_bill(2, 5), [1, 1, 0, 0, 0])
        self.assertEqual(split_bill(5, 1), [5])
        for total in range(0, 50):
            for people in range(1, 7):
                shares = split_bill(total, people)
                self.assertEqual(sum(shares), total)
                self.assertLessEqual(max(shares) - min(shares), 1)

    def test_split_rejects_nobody(self):
        with self.assertRaises(ValueError):
            split_bill(100, 0)


if __name__ == "__main__":
    unittest.main()
