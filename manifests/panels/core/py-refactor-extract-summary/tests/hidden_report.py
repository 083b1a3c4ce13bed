import ast
import pathlib
import unittest

import report


def reference(orders):
    """The report as the original code produced it."""
    lines = []
    for label, values in (
        ("north", [o["amount"] for o in orders if o["region"] == "north"]),
        ("south", [o["amount"] for o in orders if o["region"] == "south"]),
        ("all", [o["amount"] for o in orders]),
    ):
        count = len(values)
        total = sum(values)
        mean = total / count if count else 0.0
        top = max(values) if values else None
        lines.append(f"{label}: {count} orders, total {total:.2f}, mean {mean:.2f}, max {top}")
    return "\n".join(lines)


CASES = [
    [],
    [{"region": "north", "amount": 10}],
    [{"region": "south", "amount": 0.125}, {"region": "south", "amount": 7}],
    [{"region": "east", "amount": 3}, {"region": "north", "amount": -2.5}, {"region": "north", "amount": 9}],
    [{"region": r, "amount": a} for r, a in zip(["north", "south"] * 5, range(10))],
]


class HiddenReportTest(unittest.TestCase):
    def test_output_identical(self):
        for orders in CASES:
            with self.subTest(orders=orders):
                self.assertEqual(report.build_report(orders), reference(orders))

    def test_summarize(self):
        self.assertTrue(callable(getattr(report, "summarize", None)), "report.summarize exists")
        self.assertEqual(report.summarize([]), {"count": 0, "total": 0, "mean": 0.0, "max": None})
        self.assertEqual(report.summarize([1, 2, 6]), {"count": 3, "total": 9, "mean": 3.0, "max": 6})
        got = report.summarize([2.5])
        self.assertEqual(got, {"count": 1, "total": 2.5, "mean": 2.5, "max": 2.5})
        self.assertIsInstance(report.summarize([1, 2])["mean"], float)

    def test_build_report_delegates(self):
        tree = ast.parse(pathlib.Path(report.__file__).read_text())
        funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.assertIn("summarize", funcs)
        called = {
            n.func.id for n in ast.walk(funcs["build_report"]) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        self.assertIn("summarize", called)
        self.assertFalse(called & {"len", "sum", "max"}, f"build_report still calls {sorted(called & {'len', 'sum', 'max'})}")


if __name__ == "__main__":
    unittest.main()
