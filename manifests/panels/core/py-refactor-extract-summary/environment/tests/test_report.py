import unittest

from report import build_report

ORDERS = [
    {"region": "north", "amount": 10},
    {"region": "south", "amount": 5.5},
    {"region": "north", "amount": 20},
]


class ReportTest(unittest.TestCase):
    def test_report(self):
        self.assertEqual(
            build_report(ORDERS),
            "north: 2 orders, total 30.00, mean 15.00, max 20\n"
            "south: 1 orders, total 5.50, mean 5.50, max 5.5\n"
            "all: 3 orders, total 35.50, mean 11.83, max 20",
        )

    def test_empty(self):
        self.assertEqual(
            build_report([]),
            "north: 0 orders, total 0.00, mean 0.00, max None\n"
            "south: 0 orders, total 0.00, mean 0.00, max None\n"
            "all: 0 orders, total 0.00, mean 0.00, max None",
        )


if __name__ == "__main__":
    unittest.main()
