import unittest

from cart import Cart, add_tag


class HiddenCartTest(unittest.TestCase):
    def test_independent_carts(self):
        a, b = Cart(), Cart()
        a.add("apple", 2).add("pear")
        self.assertEqual(a.items, [("apple", 2), ("pear", 1)])
        self.assertEqual(b.items, [])
        self.assertEqual(Cart().items, [])
        self.assertEqual(a.total_quantity(), 3)

    def test_initial_items_are_copied(self):
        start = [("milk", 1)]
        c = Cart(start)
        c.add("bread")
        self.assertEqual(start, [("milk", 1)])
        self.assertEqual(c.items, [("milk", 1), ("bread", 1)])
        self.assertEqual(c.total_quantity(), 2)

    def test_add_tag_new_list_each_time(self):
        first = add_tag("x")
        second = add_tag("y")
        self.assertEqual(first, ["x"])
        self.assertEqual(second, ["y"])
        self.assertIsNot(first, second)

    def test_add_tag_in_place(self):
        tags = ["a"]
        out = add_tag("b", tags)
        self.assertIs(out, tags)
        self.assertEqual(tags, ["a", "b"])
        empty = []
        self.assertIs(add_tag("c", empty), empty)
        self.assertEqual(empty, ["c"])


if __name__ == "__main__":
    unittest.main()
