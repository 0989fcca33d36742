//! Rule patterns as automata: matching in linear time, and containment and overlap decided
//! exactly, with a witness string when they fail.
//!
//! A pattern is a small NFA over characters whose edges test one of a few classes: a literal
//! character, any character, any character but `/` (or `.`), whitespace or not. It is
//! determinised once, when it is built: no edge can tell apart two characters outside the
//! pattern's literals, so a DFA state needs a transition per literal and one per kind of other
//! character (`/`, `.`, whitespace, anything else). Matching is then one table step per
//! character. Deciding whether one pattern's language lies inside another's explores the
//! product of the two DFAs breadth-first over representatives of both (every literal either
//! mentions, `/`, `.`, one other whitespace, one other character).
//!
//! Bounds: determinising stops at [`MAX_DFA_STATES`] (a pattern past it is refused where rules
//! are loaded, and matched by the NFA elsewhere), and a product search at [`MAX_PRODUCT`] pairs
//! gives no answer, which callers read the cautious way (not contained; may overlap).

use std::collections::{HashMap, VecDeque};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The most states a pattern's DFA may have.
pub const MAX_DFA_STATES: usize = 4096;
/// The most state pairs one containment or overlap search explores.
pub const MAX_PRODUCT: usize = 1 << 18;
/// A transition to nowhere.
const DEAD: u32 = u32::MAX;

/// What one edge accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Lit(char),
    Any,
    NotSlash,
    /// Not `/` and not `.`: the first character a shell glob may match in a path segment.
    NotSlashOrDot,
    NotSpace,
    Space,
}

impl Class {
    fn accepts(self, c: char) -> bool {
        match self {
            Class::Lit(l) => l == c,
            Class::Any => true,
            Class::NotSlash => c != '/',
            Class::NotSlashOrDot => c != '/' && c != '.',
            Class::NotSpace => !c.is_whitespace(),
            Class::Space => c.is_whitespace(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State {
    edges: Vec<(Class, usize)>,
    epsilons: Vec<usize>,
    accepting: bool,
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    states: Vec<State>,
    /// The determinised pattern, built when first needed (a comparison, or the
    /// [`DFA_AFTER_MATCHES`]th match); `None` past [`MAX_DFA_STATES`].
    dfa: OnceLock<Option<Dfa>>,
    matched: Matched,
}

/// Matches made on the NFA: a pattern matched often (the replay) is determinised, one matched
/// once (a hook call) is not.
const DFA_AFTER_MATCHES: u32 = 16;

/// A count that clones fresh and never makes two patterns unequal.
#[derive(Debug, Default)]
struct Matched(AtomicU32);

impl Clone for Matched {
    fn clone(&self) -> Matched {
        Matched::default()
    }
}

impl PartialEq for Matched {
    fn eq(&self, _: &Matched) -> bool {
        true
    }
}

impl Eq for Matched {}

/// A deterministic automaton: per state, a transition per kind of character outside its
/// literals and the literals whose transition differs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dfa {
    states: Vec<DState>,
    /// Every literal the pattern mentions, sorted.
    literals: Vec<char>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct DState {
    accepting: bool,
    /// For `/`, `.`, whitespace, anything else (when not a literal of the pattern).
    kinds: [u32; 4],
    /// Literals whose transition is not their kind's, sorted.
    literals: Vec<(char, u32)>,
}

fn kind(c: char) -> usize {
    match c {
        '/' => 0,
        '.' => 1,
        c if c.is_whitespace() => 2,
        _ => 3,
    }
}

/// A character of each kind that no literal edge out of the current state set tests: `/` and
/// `.` are kinds of one character each; whitespace and anything else have many (`None` only if
/// every candidate is such a literal, which no pattern of a rule's size reaches).
fn kind_representatives(edge_literals: &[char]) -> [Option<char>; 4] {
    let free = |c: &char| !edge_literals.contains(c);
    [
        Some('/'),
        Some('.'),
        [
            ' ', '\t', '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{a0}', '\u{2000}',
        ]
        .into_iter()
        .find(free),
        ('\u{E100}'..='\u{E1FF}').find(free),
    ]
}

impl Dfa {
    fn step(&self, state: u32, c: char) -> u32 {
        let Some(s) = self.states.get(state as usize) else {
            return DEAD;
        };
        match s.literals.binary_search_by_key(&c, |(l, _)| *l) {
            Ok(i) => s.literals.get(i).map_or(DEAD, |(_, to)| *to),
            Err(_) => s.kinds.get(kind(c)).copied().unwrap_or(DEAD),
        }
    }

    fn accepting(&self, state: u32) -> bool {
        self.states.get(state as usize).is_some_and(|s| s.accepting)
    }

    /// Subset construction over sparse state sets; `None` past the bound.
    fn build(nfa: &[State]) -> Option<Dfa> {
        let mut literals: Vec<char> = nfa
            .iter()
            .flat_map(|s| s.edges.iter())
            .filter_map(|(class, _)| match class {
                Class::Lit(c) => Some(*c),
                _ => None,
            })
            .collect();
        literals.sort_unstable();
        literals.dedup();
        let start = sparse_closure(nfa, vec![0]);
        let mut index: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut sets: Vec<Vec<u32>> = Vec::new();
        let mut states: Vec<DState> = Vec::new();
        index.insert(start.clone(), 0);
        sets.push(start);
        let mut at = 0usize;
        while let Some(set) = sets.get(at).cloned() {
            let mut target = |next: Vec<u32>| -> Option<u32> {
                if next.is_empty() {
                    return Some(DEAD);
                }
                if let Some(id) = index.get(&next) {
                    return Some(*id);
                }
                if sets.len() >= MAX_DFA_STATES {
                    return None;
                }
                let id = u32::try_from(sets.len()).ok()?;
                index.insert(next.clone(), id);
                sets.push(next);
                Some(id)
            };
            // Only the literals tested on edges out of this set can move differently from
            // their kind; every other character moves as its kind's representative does.
            let mut edge_literals: Vec<char> = set
                .iter()
                .filter_map(|s| nfa.get(*s as usize))
                .flat_map(|st| st.edges.iter())
                .filter_map(|(class, _)| match class {
                    Class::Lit(c) if kind(*c) >= 2 => Some(*c),
                    _ => None,
                })
                .collect();
            edge_literals.sort_unstable();
            edge_literals.dedup();
            let mut by_kind = [DEAD; 4];
            for (slot, rep) in by_kind.iter_mut().zip(kind_representatives(&edge_literals)) {
                if let Some(c) = rep {
                    *slot = target(sparse_step(nfa, &set, c))?;
                }
            }
            let mut exceptions = Vec::new();
            for &c in &edge_literals {
                let to = target(sparse_step(nfa, &set, c))?;
                if by_kind.get(kind(c)) != Some(&to) {
                    exceptions.push((c, to));
                }
            }
            states.push(DState {
                accepting: set
                    .iter()
                    .any(|s| nfa.get(*s as usize).is_some_and(|st| st.accepting)),
                kinds: by_kind,
                literals: exceptions,
            });
            at += 1;
        }
        Some(Dfa { states, literals })
    }
}

/// The states reachable from `set` by empty moves, sorted.
fn sparse_closure(nfa: &[State], mut set: Vec<u32>) -> Vec<u32> {
    let has_epsilons = |s: &u32| {
        nfa.get(*s as usize)
            .is_some_and(|st| !st.epsilons.is_empty())
    };
    if set.iter().any(has_epsilons) {
        let mut on = vec![false; nfa.len()];
        for s in &set {
            if let Some(slot) = on.get_mut(*s as usize) {
                *slot = true;
            }
        }
        let mut stack = set.clone();
        while let Some(s) = stack.pop() {
            for &next in nfa
                .get(s as usize)
                .map_or(&[][..], |st| st.epsilons.as_slice())
            {
                if let Some(slot) = on.get_mut(next)
                    && !*slot
                {
                    *slot = true;
                    set.push(next as u32);
                    stack.push(next as u32);
                }
            }
        }
    }
    set.sort_unstable();
    set.dedup();
    set
}

/// The states `set` moves to on `c`, closed.
fn sparse_step(nfa: &[State], set: &[u32], c: char) -> Vec<u32> {
    let mut next = Vec::new();
    for s in set {
        for (class, to) in nfa
            .get(*s as usize)
            .map_or(&[][..], |st| st.edges.as_slice())
        {
            if class.accepts(c) {
                next.push(*to as u32);
            }
        }
    }
    next.sort_unstable();
    next.dedup();
    sparse_closure(nfa, next)
}

/// How `*` and `?` behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobKind {
    /// `*` spans anything (URLs, generic payloads).
    Text,
    /// Shell command rules: a `*` inside the pattern spans one word (no whitespace); a `*` at
    /// the very end spans the rest. So `aws * describe-*` puts `describe-*` on the operation,
    /// never on an argument.
    Command,
    /// Paths: `**` spans anything, `*` and `?` stop at `/`, and `**/` may match nothing.
    Path,
    /// Shell globs in command operands: `*`, `?` and `[…]` stop at `/`.
    ShellGlob,
}

struct Builder {
    states: Vec<State>,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            states: vec![State::default()],
        }
    }

    fn last(&self) -> usize {
        self.states.len() - 1
    }

    fn new_state(&mut self) -> usize {
        self.states.push(State::default());
        self.last()
    }

    fn edge(&mut self, from: usize, class: Class, to: usize) {
        if let Some(state) = self.states.get_mut(from) {
            state.edges.push((class, to));
        }
    }

    fn epsilon(&mut self, from: usize, to: usize) {
        if let Some(state) = self.states.get_mut(from) {
            state.epsilons.push(to);
        }
    }

    /// Appends one character of `class` after the current end.
    fn one(&mut self, class: Class) {
        let from = self.last();
        let to = self.new_state();
        self.edge(from, class, to);
    }

    /// Appends any run (possibly empty) of `class` after the current end.
    fn star(&mut self, class: Class) {
        let from = self.last();
        let to = self.new_state();
        self.epsilon(from, to);
        self.edge(to, class, to);
    }

    fn accept_here(&mut self) {
        let end = self.last();
        if let Some(state) = self.states.get_mut(end) {
            state.accepting = true;
        }
    }

    fn finish(mut self) -> Pattern {
        self.accept_here();
        Pattern::from_states(self.states)
    }
}

impl Pattern {
    /// Matches everything.
    pub fn everything() -> Pattern {
        let mut b = Builder::new();
        b.star(Class::Any);
        b.finish()
    }

    /// Exactly `text`.
    pub fn literal(text: &str) -> Pattern {
        let mut b = Builder::new();
        for c in text.chars() {
            b.one(Class::Lit(c));
        }
        b.finish()
    }

    /// Claude Code's `prefix:*`: exactly `prefix`, or `prefix` then whitespace then anything.
    pub fn command_prefix(prefix: &str) -> Pattern {
        let mut b = Builder::new();
        for c in prefix.chars() {
            b.one(Class::Lit(c));
        }
        b.accept_here();
        b.one(Class::Space);
        b.star(Class::Any);
        b.finish()
    }

    /// A glob of the given kind, anchored at both ends.
    pub fn glob(text: &str, kind: GlobKind) -> Pattern {
        let chars: Vec<char> = text.chars().collect();
        let mut b = Builder::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            match (c, kind) {
                ('*', GlobKind::Text) => b.star(Class::Any),
                ('*', GlobKind::Command) if i + 1 == chars.len() => b.star(Class::Any),
                ('*', GlobKind::Command) => b.star(Class::NotSpace),
                ('*' | '?' | '[', GlobKind::ShellGlob)
                    if (i == 0 || chars.get(i - 1) == Some(&'/'))
                        && (c != '[' || chars.iter().skip(i).any(|c| *c == ']')) =>
                {
                    // A glob never matches a leading dot: `*.rs` cannot expand to `.env.rs`.
                    match c {
                        '*' => {
                            let from = b.last();
                            let first = b.new_state();
                            b.edge(from, Class::NotSlashOrDot, first);
                            b.edge(first, Class::NotSlash, first);
                            let end = b.new_state();
                            b.epsilon(from, end);
                            b.epsilon(first, end);
                        }
                        '[' => {
                            i = bracket_end(&chars, i);
                            b.star(Class::NotSlash);
                        }
                        _ => b.one(Class::NotSlashOrDot),
                    }
                }
                ('*', GlobKind::Path) if chars.get(i + 1) == Some(&'*') => {
                    i += 1;
                    if chars.get(i + 1) == Some(&'/') {
                        // `**/`: nothing, or any run ending in `/`.
                        i += 1;
                        let from = b.last();
                        let through = b.new_state();
                        b.epsilon(from, through);
                        b.edge(through, Class::Any, through);
                        let after = b.new_state();
                        b.edge(through, Class::Lit('/'), after);
                        b.epsilon(from, after);
                    } else {
                        b.star(Class::Any);
                    }
                }
                ('*', GlobKind::Path | GlobKind::ShellGlob) => b.star(Class::NotSlash),
                ('?', GlobKind::Path | GlobKind::ShellGlob) => b.one(Class::NotSlash),
                ('[', GlobKind::ShellGlob) if chars.iter().skip(i).any(|c| *c == ']') => {
                    // A bracket expression (`[]e]`, `[[:alpha:]]`): over-approximated as any run
                    // within a segment, which only ever widens what a deny sees.
                    i = bracket_end(&chars, i);
                    b.star(Class::NotSlash);
                }
                ('{', GlobKind::ShellGlob) if chars.iter().skip(i).any(|c| *c == '}') => {
                    // Brace expansion (`{.env,x}`): over-approximated as anything.
                    let mut depth = 0usize;
                    while let Some(&c) = chars.get(i) {
                        if c == '{' {
                            depth += 1;
                        } else if c == '}' {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        i += 1;
                    }
                    b.star(Class::Any);
                }
                ('\\', GlobKind::Path | GlobKind::ShellGlob) if chars.get(i + 1).is_some() => {
                    // An escaped character stands for itself.
                    i += 1;
                    if let Some(&next) = chars.get(i) {
                        b.one(Class::Lit(next));
                    }
                }
                (other, _) => b.one(Class::Lit(other)),
            }
            i += 1;
        }
        b.finish()
    }

    fn from_states(states: Vec<State>) -> Pattern {
        Pattern {
            states,
            dfa: OnceLock::new(),
            matched: Matched::default(),
        }
    }

    /// The determinised pattern, built the first time it is asked for.
    fn dfa(&self) -> Option<&Dfa> {
        self.dfa.get_or_init(|| Dfa::build(&self.states)).as_ref()
    }

    /// The pattern could not be determinised within [`MAX_DFA_STATES`] states (determinises
    /// it).
    pub fn too_complex(&self) -> bool {
        self.dfa().is_none()
    }

    /// The same pattern over lower-cased text (literals lower-cased), for matching on file
    /// systems that ignore case.
    pub fn folded(&self) -> Pattern {
        let states: Vec<State> = self
            .states
            .iter()
            .map(|state| State {
                edges: state
                    .edges
                    .iter()
                    .map(|(class, to)| match class {
                        Class::Lit(c) => (Class::Lit(c.to_ascii_lowercase()), *to),
                        other => (*other, *to),
                    })
                    .collect(),
                epsilons: state.epsilons.clone(),
                accepting: state.accepting,
            })
            .collect();
        Pattern::from_states(states)
    }

    /// Shell text in which `UNRESOLVED` marks a word whose value is unknown: that
    /// character stands for any run of characters, everything else for itself.
    pub fn with_unknowns(text: &str) -> Pattern {
        let mut b = Builder::new();
        for c in text.chars() {
            if c == crate::shell::UNRESOLVED {
                b.star(Class::Any);
            } else {
                b.one(Class::Lit(c));
            }
        }
        b.finish()
    }

    /// The pattern matches the whole of `text`: on the DFA once there is one, else on the NFA
    /// with sparse state sets (no bigger than the pattern).
    pub fn matches(&self, text: &str) -> bool {
        let dfa = match self.dfa.get() {
            Some(dfa) => dfa.as_ref(),
            None if self.matched.0.fetch_add(1, Ordering::Relaxed) >= DFA_AFTER_MATCHES => {
                self.dfa()
            }
            None => None,
        };
        if let Some(dfa) = dfa {
            let mut state = 0u32;
            for c in text.chars() {
                state = dfa.step(state, c);
                if state == DEAD {
                    return false;
                }
            }
            return dfa.accepting(state);
        }
        let mut set = sparse_closure(&self.states, vec![0]);
        for c in text.chars() {
            set = sparse_step(&self.states, &set, c);
            if set.is_empty() {
                return false;
            }
        }
        set.iter()
            .any(|s| self.states.get(*s as usize).is_some_and(|st| st.accepting))
    }

    /// A string `self` matches and `other` does not, if any: `None` proves `self ⊆ other`.
    /// A search past its bounds gives an empty witness (not proved contained).
    pub fn escapes(&self, other: &Pattern) -> Option<String> {
        explore(self, other, |a, b| a && !b).unwrap_or(Some(String::new()))
    }

    /// A string both match, if any. A search past its bounds gives an empty witness (they may
    /// overlap).
    pub fn overlap(&self, other: &Pattern) -> Option<String> {
        explore(self, other, |a, b| a && b).unwrap_or(Some(String::new()))
    }

    /// Every string `self` matches, `other` matches too (proved; no proof within the bounds is
    /// "no").
    pub fn within(&self, other: &Pattern) -> bool {
        matches!(explore(self, other, |a, b| a && !b), Ok(None))
    }

    /// `self` matches strictly fewer strings than `other`.
    pub fn strictly_within(&self, other: &Pattern) -> bool {
        self.within(other) && !other.within(self)
    }
}

/// Where a bracket expression starting at `open` ends: a `]` right after `[` or `[!`/`[^` is a
/// member, and `[:class:]` is skipped whole.
fn bracket_end(chars: &[char], open: usize) -> usize {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while let Some(&c) = chars.get(i) {
        if c == '[' && chars.get(i + 1) == Some(&':') {
            i += 2;
            while chars.get(i).is_some_and(|c| *c != ']') {
                i += 1;
            }
        } else if c == ']' {
            return i;
        }
        i += 1;
    }
    i
}

/// Escapes glob characters so `text` stands for itself inside a path pattern.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The characters that stand for every class of character the two patterns can tell apart.
fn representatives(a: &[char], b: &[char]) -> Vec<char> {
    let mut reps: Vec<char> = a.iter().chain(b).copied().collect();
    reps.push('/');
    reps.push('.');
    reps.sort_unstable();
    reps.dedup();
    if let Some(space) = [' ', '\t', '\n', '\r', '\u{b}', '\u{c}']
        .into_iter()
        .find(|c| !reps.contains(c))
    {
        reps.push(space);
    }
    if let Some(other) = ('\u{E100}'..='\u{E1FF}').find(|c| !reps.contains(c)) {
        reps.push(other);
    }
    reps
}

/// A pair of DFA states, with the pair and character it was first reached from.
type ProductNode = ((u32, u32), Option<(usize, char)>);

/// The search gave up at [`MAX_PRODUCT`] pairs, or a pattern has no DFA.
struct Undecided;

/// Breadth-first search of the product of the two DFAs for a pair of states where
/// `goal(a accepts, b accepts)` holds; returns the shortest witness.
fn explore(
    a: &Pattern,
    b: &Pattern,
    goal: impl Fn(bool, bool) -> bool,
) -> Result<Option<String>, Undecided> {
    let (Some(da), Some(db)) = (a.dfa(), b.dfa()) else {
        return Err(Undecided);
    };
    let reps = representatives(&da.literals, &db.literals);
    let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
    // Each product state, with the state and character it was first reached from.
    let mut nodes: Vec<ProductNode> = vec![((0, 0), None)];
    seen.insert((0, 0), 0);
    let mut queue = VecDeque::from([0usize]);
    while let Some(index) = queue.pop_front() {
        let Some(((sa, sb), _)) = nodes.get(index).copied() else {
            break;
        };
        if goal(da.accepting(sa), sb != DEAD && db.accepting(sb)) {
            let mut witness = Vec::new();
            let mut at = index;
            while let Some((_, Some((parent, c)))) = nodes.get(at) {
                witness.push(*c);
                at = *parent;
            }
            witness.reverse();
            return Ok(Some(witness.into_iter().collect()));
        }
        if sa == DEAD {
            continue; // `a` is dead: nothing further `a` accepts
        }
        for &c in &reps {
            let next = (
                da.step(sa, c),
                if sb == DEAD { DEAD } else { db.step(sb, c) },
            );
            if let std::collections::hash_map::Entry::Vacant(slot) = seen.entry(next) {
                if nodes.len() >= MAX_PRODUCT {
                    return Err(Undecided);
                }
                slot.insert(nodes.len());
                nodes.push((next, Some((index, c))));
                queue.push_back(nodes.len() - 1);
            }
        }
    }
    Ok(None)
}
