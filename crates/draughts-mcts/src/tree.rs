//! The search tree: nodes and edges in two arenas, addressed by `u32` indices.
//!
//! A node is created the first time a simulation walks its edge. Its edges (legal moves and
//! priors) are stored contiguously when it is expanded; child nodes are created lazily, so an
//! expanded node with 30 moves of which 3 were tried holds 30 edges and 3 child nodes.
//!
//! Statistics live in the child node: `visits`, and `value_sum`/`draw_sum` from the point of view
//! of the side to move AT that node. The parent's view of a child's value is the negation.

use draughts_core::Move;

/// No node (an edge that was never walked, the root's parent).
pub(crate) const NONE: u32 = u32::MAX;

/// The root is always node 0.
pub(crate) const ROOT: usize = 0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// Created, not yet evaluated (or its evaluation was abandoned).
    New,
    /// Sent to the evaluator; the answer has not come back.
    Pending,
    /// Evaluated; its edges hold the priors.
    Expanded,
    /// The game is over here; `raw_value` is exact.
    Terminal,
}

/// What is proven about a node, for the side to move there (MCTS-Solver: a game end found in
/// the tree makes its parent a proven win; a node all of whose moves lead to proven wins for
/// the opponent is a proven loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Proof {
    /// Not proven.
    Unknown,
    /// The side to move wins with best play.
    Win,
    /// The side to move loses whatever it plays.
    Loss,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub parent: u32,
    pub first_edge: u32,
    pub num_edges: u32,
    pub state: NodeState,
    /// Completed simulations through this node (its own evaluation included).
    pub visits: u32,
    /// Simulations through this node whose leaf is waiting for the evaluator (virtual loss).
    pub in_flight: u32,
    /// Sum of backed-up `win - loss`, side to move at this node.
    pub value_sum: f64,
    /// Sum of backed-up draw probabilities.
    pub draw_sum: f64,
    /// The evaluator's (or the exact) value of this node, side to move here.
    pub raw_value: f32,
    /// The evaluator's (or the exact) draw probability.
    pub raw_draw: f32,
    /// Proven result, if any.
    pub proof: Proof,
}

impl Node {
    fn new(parent: u32) -> Node {
        Node {
            parent,
            first_edge: 0,
            num_edges: 0,
            state: NodeState::New,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            draw_sum: 0.0,
            raw_value: 0.0,
            raw_draw: 0.0,
            proof: Proof::Unknown,
        }
    }

    /// The value and draw probability to back up from this node: exact when proven.
    pub fn leaf_value(&self) -> (f32, f32) {
        match self.proof {
            Proof::Win => (1.0, 0.0),
            Proof::Loss => (-1.0, 0.0),
            Proof::Unknown => (self.raw_value, self.raw_draw),
        }
    }

    pub fn edge_range(&self) -> std::ops::Range<usize> {
        self.first_edge as usize..(self.first_edge + self.num_edges) as usize
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub mv: Move,
    pub prior: f32,
    pub child: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

impl Tree {
    /// A tree with one new root.
    pub fn new() -> Tree {
        Tree { nodes: vec![Node::new(NONE)], edges: Vec::new() }
    }

    /// Appends a new child of `parent` and returns its index.
    pub fn add_node(&mut self, parent: usize) -> u32 {
        let i = self.nodes.len() as u32;
        self.nodes.push(Node::new(parent as u32));
        i
    }

    /// Stores `moves` as the edges of `node` (priors zero until the evaluation comes back).
    pub fn add_edges(&mut self, node: usize, moves: &[Move]) {
        let first = self.edges.len() as u32;
        self.edges.extend(moves.iter().map(|&mv| Edge { mv, prior: 0.0, child: NONE }));
        let n = &mut self.nodes[node];
        n.first_edge = first;
        n.num_edges = moves.len() as u32;
    }

    pub fn edges_of(&self, node: usize) -> &[Edge] {
        &self.edges[self.nodes[node].edge_range()]
    }

    /// A new tree holding only the subtree under `new_root`, in breadth-first order, with the
    /// root at index 0. No node of the subtree may be pending.
    pub fn subtree(&self, new_root: usize) -> Tree {
        let mut out = Tree { nodes: Vec::new(), edges: Vec::new() };
        let mut old_index = vec![new_root];
        let mut root = self.nodes[new_root].clone();
        root.parent = NONE;
        out.nodes.push(root);
        let mut i = 0;
        while i < out.nodes.len() {
            let old = &self.nodes[old_index[i]];
            let first = out.edges.len() as u32;
            for e in &self.edges[old.edge_range()] {
                let mut e = *e;
                if e.child != NONE {
                    let mut child = self.nodes[e.child as usize].clone();
                    child.parent = i as u32;
                    old_index.push(e.child as usize);
                    e.child = out.nodes.len() as u32;
                    out.nodes.push(child);
                }
                out.edges.push(e);
            }
            out.nodes[i].first_edge = first;
            i += 1;
        }
        out
    }
}
