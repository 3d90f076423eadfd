package broker

// rankTree is an order-statistic tree, a treap: its nodes in order of (key, tie), each subtree
// knowing its size and the sum of its nodes' values, so that inserting or removing a node,
// finding the k-th, counting the keys above a bound and summing the values each cost
// O(log n). The overview keeps the partitions' lags in such trees.
type rankTree struct {
	root *rankNode
	seed uint64 // the priorities' generator
}

// rankNode is one entry of a rankTree. Its owner sets key, tie and val while it is out of the
// tree, and never moves it while it is in.
type rankNode struct {
	key, tie int64
	val      int64 // what the tree sums
	in       bool  // in a tree

	prio uint64
	size int
	sum  int64
	l, r *rankNode
}

// before is the tree's order: by key, then tie.
func (n *rankNode) before(o *rankNode) bool {
	if n.key != o.key {
		return n.key < o.key
	}
	return n.tie < o.tie
}

func (n *rankNode) fix() {
	n.size, n.sum = 1, n.val
	if n.l != nil {
		n.size += n.l.size
		n.sum += n.l.sum
	}
	if n.r != nil {
		n.size += n.r.size
		n.sum += n.r.sum
	}
}

func (t *rankTree) len() int {
	if t.root == nil {
		return 0
	}
	return t.root.size
}

// total is the sum of every node's val.
func (t *rankTree) total() int64 {
	if t.root == nil {
		return 0
	}
	return t.root.sum
}

// insert adds n, which is in no tree.
func (t *rankTree) insert(n *rankNode) {
	t.seed += 0x9e3779b97f4a7c15 // splitmix64: priorities spread evenly whatever the keys
	z := t.seed
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	n.prio, n.l, n.r, n.in = z^z>>31, nil, nil, true
	n.fix()
	t.root = insertAt(t.root, n)
}

func insertAt(root, n *rankNode) *rankNode {
	if root == nil {
		return n
	}
	if n.before(root) {
		root.l = insertAt(root.l, n)
		if root.l.prio > root.prio {
			return rotateRight(root)
		}
	} else {
		root.r = insertAt(root.r, n)
		if root.r.prio > root.prio {
			return rotateLeft(root)
		}
	}
	root.fix()
	return root
}

func rotateRight(n *rankNode) *rankNode {
	x := n.l
	n.l, x.r = x.r, n
	n.fix()
	x.fix()
	return x
}

func rotateLeft(n *rankNode) *rankNode {
	x := n.r
	n.r, x.l = x.l, n
	n.fix()
	x.fix()
	return x
}

// remove takes n, which is in t, out of it.
func (t *rankTree) remove(n *rankNode) {
	t.root = removeAt(t.root, n)
	n.l, n.r, n.in = nil, nil, false
}

func removeAt(root, n *rankNode) *rankNode {
	if root == n {
		return joinNodes(n.l, n.r)
	}
	if n.before(root) {
		root.l = removeAt(root.l, n)
	} else {
		root.r = removeAt(root.r, n)
	}
	root.fix()
	return root
}

// joinNodes joins two trees, every node of a before every node of b.
func joinNodes(a, b *rankNode) *rankNode {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.r = joinNodes(a.r, b)
		a.fix()
		return a
	}
	b.l = joinNodes(a, b.l)
	b.fix()
	return b
}

// set moves n to a new key and val: out of the tree and back when it was in it.
func (t *rankTree) set(n *rankNode, key, val int64) {
	if n.in && n.key == key && n.val == val {
		return
	}
	if n.in {
		t.remove(n)
	}
	n.key, n.val = key, val
	t.insert(n)
}

// drop takes n out of t if it is in it.
func (t *rankTree) drop(n *rankNode) {
	if n.in {
		t.remove(n)
	}
}

// kth is the node at index k in the tree's order, 0 ≤ k < len.
func (t *rankTree) kth(k int) *rankNode {
	n := t.root
	for {
		left := 0
		if n.l != nil {
			left = n.l.size
		}
		switch {
		case k < left:
			n = n.l
		case k == left:
			return n
		default:
			k -= left + 1
			n = n.r
		}
	}
}

// above counts the nodes whose key is greater than key.
func (t *rankTree) above(key int64) int {
	count := 0
	for n := t.root; n != nil; {
		if n.key > key {
			count++
			if n.r != nil {
				count += n.r.size
			}
			n = n.l
		} else {
			n = n.r
		}
	}
	return count
}

// walkDown calls f with the nodes in descending order while it returns true.
func (t *rankTree) walkDown(f func(*rankNode) bool) {
	var walk func(n *rankNode) bool
	walk = func(n *rankNode) bool {
		return n == nil || (walk(n.r) && f(n) && walk(n.l))
	}
	walk(t.root)
}
