"""Primitive ops by category. Each op is an autograd Function with its public function right below it."""
