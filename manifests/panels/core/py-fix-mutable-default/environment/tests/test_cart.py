import unittest

from cart import Cart, add_tag


class CartTest(unittest.TestCase):
    def test_new_carts_are_independent(self):
        a = Cart()
        b = Cart()
        a.add("apple", 2)
        self.assertEqual(b.items, [])

    def test_add_tag_without_list(self):
        self.assertEqual(add_tag("x"), ["x"])
        self.assertEqual(add_tag("y"), ["y"])


if __name__ == "__main__":
    unittest.main()
