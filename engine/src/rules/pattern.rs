//! Rule patterns as automata: matching in linear time, and containment and overlap decided
//! exactly, with a witness string when they fail.
//!
//! A pattern is a small NFA over characters whose edges test one of four classes: a literal
//! character, any character, any character but `/`, or whitespace. Deciding whether one
//! pattern's language lies inside another's needs only finitely many representative
//! characters — every literal either pattern mentions, `/`, one other whitespace, one other
//! character — because no edge can tell apart two characters outside that set. The product of
//! the two determinised automata is then explored breadth-first over those representatives.

use std::collections::{HashMap, VecDeque};

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
        Pattern {
            states: self.states,
        }
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

    fn closure(&self, set: &mut [bool]) {
        let mut stack: Vec<usize> = set
            .iter()
            .enumerate()
            .filter(|(_, on)| **on)
            .map(|(i, _)| i)
            .collect();
        while let Some(s) = stack.pop() {
            for &next in self
                .states
                .get(s)
                .map(|st| st.epsilons.as_slice())
                .unwrap_or(&[])
            {
                if let Some(slot) = set.get_mut(next)
                    && !*slot
                {
                    *slot = true;
                    stack.push(next);
                }
            }
        }
    }

    fn start(&self) -> Vec<bool> {
        let mut set = vec![false; self.states.len()];
        if let Some(first) = set.first_mut() {
            *first = true;
        }
        self.closure(&mut set);
        set
    }

    fn step(&self, set: &[bool], c: char) -> Vec<bool> {
        let mut next = vec![false; self.states.len()];
        for (s, on) in set.iter().enumerate() {
            if !on {
                continue;
            }
            for (class, to) in self
                .states
                .get(s)
                .map(|st| st.edges.as_slice())
                .unwrap_or(&[])
            {
                if class.accepts(c)
                    && let Some(slot) = next.get_mut(*to)
                {
                    *slot = true;
                }
            }
        }
        self.closure(&mut next);
        next
    }

    fn accepting(&self, set: &[bool]) -> bool {
        set.iter()
            .zip(&self.states)
            .any(|(on, st)| *on && st.accepting)
    }

    /// The same pattern over lower-cased text (literals lower-cased), for matching on file
    /// systems that ignore case.
    pub fn folded(&self) -> Pattern {
        let states = self
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
        Pattern { states }
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

    /// The pattern matches the whole of `text`.
    pub fn matches(&self, text: &str) -> bool {
        let mut set = self.start();
        for c in text.chars() {
            set = self.step(&set, c);
            if !set.iter().any(|on| *on) {
                return false;
            }
        }
        self.accepting(&set)
    }

    fn literals(&self, out: &mut Vec<char>) {
        for state in &self.states {
            for (class, _) in &state.edges {
                if let Class::Lit(c) = class {
                    out.push(*c);
                }
            }
        }
    }

    /// A string `self` matches and `other` does not, if any: `None` proves `self ⊆ other`.
    pub fn escapes(&self, other: &Pattern) -> Option<String> {
        explore(self, other, |a, b| a && !b)
    }

    /// A string both match, if any.
    pub fn overlap(&self, other: &Pattern) -> Option<String> {
        explore(self, other, |a, b| a && b)
    }

    /// Every string `self` matches, `other` matches too.
    pub fn within(&self, other: &Pattern) -> bool {
        self.escapes(other).is_none()
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
fn representatives(a: &Pattern, b: &Pattern) -> Vec<char> {
    let mut reps = Vec::new();
    a.literals(&mut reps);
    b.literals(&mut reps);
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

/// A state of the product automaton: the state sets of both patterns.
type Pair = (Vec<bool>, Vec<bool>);

/// Breadth-first search of the product of the determinised automata for a pair of states
/// where `goal(a accepts, b accepts)` holds; returns the shortest witness.
fn explore(a: &Pattern, b: &Pattern, goal: impl Fn(bool, bool) -> bool) -> Option<String> {
    let reps = representatives(a, b);
    let start = (a.start(), b.start());
    let mut seen: HashMap<Pair, usize> = HashMap::new();
    // Each product state, with the state and character it was first reached from.
    let mut nodes: Vec<(Pair, Option<(usize, char)>)> = Vec::new();
    let mut queue = VecDeque::new();
    seen.insert(start.clone(), 0);
    nodes.push((start, None));
    queue.push_back(0usize);
    while let Some(index) = queue.pop_front() {
        let Some(((sa, sb), _)) = nodes.get(index).cloned() else {
            break;
        };
        if goal(a.accepting(&sa), b.accepting(&sb)) {
            let mut witness = Vec::new();
            let mut at = index;
            while let Some((_, Some((parent, c)))) = nodes.get(at) {
                witness.push(*c);
                at = *parent;
            }
            witness.reverse();
            return Some(witness.into_iter().collect());
        }
        if !sa.iter().any(|on| *on) {
            continue; // `a` is dead: nothing further `a` accepts
        }
        for &c in &reps {
            let next = (a.step(&sa, c), b.step(&sb, c));
            if !seen.contains_key(&next) {
                seen.insert(next.clone(), nodes.len());
                nodes.push((next, Some((index, c))));
                queue.push_back(nodes.len() - 1);
            }
        }
    }
    None
}
