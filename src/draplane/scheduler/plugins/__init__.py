"""In-tree scheduler plugins; `registry.new_in_tree_registry()` assembles them."""
