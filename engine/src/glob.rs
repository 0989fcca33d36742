//! Shell globs and brace expansion: the words a pattern could become. Matching is by path
//! segment (a glob never spans `/`) and errs wide: a bracket expression matches any one
//! character, so a question "could this reach X" is never answered no when the shell might.

/// Brace expansion of `text` (`{a,b}`, nested, at most 64 results): the words the shell would
/// produce. Ranges (`{1..3}`) are left as written.
pub fn expand_braces(text: &str) -> Vec<String> {
    let mut out = vec![text.to_string()];
    for _ in 0..6 {
        let mut next = Vec::new();
        let mut changed = false;
        for word in &out {
            match split_first_brace(word) {
                Some((prefix, alternatives, suffix)) => {
                    changed = true;
                    for alt in alternatives {
                        next.push(format!("{prefix}{alt}{suffix}"));
                    }
                }
                None => next.push(word.clone()),
            }
        }
        next.truncate(64);
        out = next;
        if !changed {
            break;
        }
    }
    out
}

/// The first `{a,b}` group with a comma at its own level: prefix, alternatives, suffix.
fn split_first_brace(word: &str) -> Option<(String, Vec<String>, String)> {
    let chars: Vec<char> = word.chars().collect();
    let open = chars.iter().position(|c| *c == '{')?;
    let mut depth = 0usize;
    let mut parts = Vec::new();
    let mut current = String::new();
    for (i, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => {
                depth += 1;
                if depth > 1 {
                    current.push(*c);
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    parts.push(current);
                    if parts.len() < 2 {
                        return None;
                    }
                    let prefix: String = chars.get(..open)?.iter().collect();
                    let suffix: String = chars.get(i + 1..)?.iter().collect();
                    return Some((prefix, parts, suffix));
                }
                current.push(*c);
            }
            ',' if depth == 1 => parts.push(std::mem::take(&mut current)),
            _ => current.push(*c),
        }
    }
    None
}

/// Whether a shell glob (absolute) could expand to `dir` or a path below it, compared case-blind
/// segment by segment (a glob never spans `/`; a `**` segment or a leftover brace is taken to
/// match anything from there on, which only widens the result).
pub fn glob_may_reach_dir(glob: &str, dir: &str) -> bool {
    let glob = glob.to_ascii_lowercase();
    let dir = dir.to_ascii_lowercase();
    let mut glob_segments = glob.split('/').filter(|s| !s.is_empty());
    for dir_segment in dir.split('/').filter(|s| !s.is_empty()) {
        match glob_segments.next() {
            None => return false,
            Some(segment) if segment == "**" || segment.contains('{') => return true,
            Some(segment) if !segment_matches(segment, dir_segment) => return false,
            Some(_) => {}
        }
    }
    true
}

/// A glob segment (`*`, `?`, `[…]`) matches a literal name (iterative wildcard matching; a
/// bracket expression is taken to match any one character, which only widens the result).
/// ASCII text is compared byte by byte, without allocating; other text by character.
pub(crate) fn segment_matches(glob: &str, name: &str) -> bool {
    if glob.is_ascii() && name.is_ascii() {
        return wildcard_match(glob.as_bytes(), name.as_bytes(), [b'*', b'?', b'[', b']']);
    }
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    wildcard_match(&g, &n, ['*', '?', '[', ']'])
}

/// [`segment_matches`] against a name given as bytes (the packed lists of `static_index`),
/// without a UTF-8 check when both are ASCII.
pub(crate) fn segment_matches_bytes(glob: &str, name: &[u8]) -> bool {
    if glob.is_ascii() && name.is_ascii() {
        // A glob's first byte, when no wildcard, and its last, when no wildcard or bracket, can
        // only match the name's own first and last bytes (`*.ts` against a list of names):
        // asked first, they settle most pairs without the matcher.
        let g = glob.as_bytes();
        let wildcard = |b: u8| matches!(b, b'*' | b'?' | b'[');
        if g.first()
            .is_some_and(|&b| !wildcard(b) && name.first() != Some(&b))
            || g.last()
                .is_some_and(|&b| !wildcard(b) && b != b']' && name.last() != Some(&b))
        {
            return false;
        }
        return wildcard_match(g, name, [b'*', b'?', b'[', b']']);
    }
    std::str::from_utf8(name).is_ok_and(|name| segment_matches(glob, name))
}

/// The matching behind [`segment_matches`], over bytes or characters; `special` is
/// `[star, question, open, close]`.
fn wildcard_match<T: Copy + PartialEq>(g: &[T], n: &[T], special: [T; 4]) -> bool {
    let [any_run, any_one, open, close] = special;
    let (mut gi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match g.get(gi) {
            Some(c) if *c == any_run => {
                star = Some((gi, ni));
                gi += 1;
            }
            Some(c) if *c == open => {
                let end = g.iter().skip(gi).position(|c| *c == close).map(|p| gi + p);
                match end {
                    Some(end) => {
                        gi = end + 1;
                        ni += 1;
                    }
                    None if n.get(ni) == Some(&open) => {
                        gi += 1;
                        ni += 1;
                    }
                    None => match star {
                        Some((sg, sn)) => {
                            gi = sg + 1;
                            ni = sn + 1;
                            star = Some((sg, sn + 1));
                        }
                        None => return false,
                    },
                }
            }
            Some(c) if *c == any_one || Some(c) == n.get(ni) => {
                gi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    gi = sg + 1;
                    ni = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    g.iter().skip(gi).all(|c| *c == any_run)
}

/// The most directory entries one glob expansion looks at ([`expand_glob`]).
pub const MAX_GLOB_ENTRIES: usize = 4_096;
/// The most paths one glob expansion names ([`expand_glob`]).
pub const MAX_GLOB_PATHS: usize = 256;

/// What a shell glob (an absolute, normal path after brace expansion) may expand to, on a file
/// system whose directories `list` names, each with whether it may be a directory (a link may
/// lead to one); `None`: no directory there, or one it cannot read, which the shell cannot
/// expand into either. Errs wide, as every matcher here does: a
/// wildcard segment matches names case-blind and hidden names too (`nocaseglob`, `dotglob`),
/// and a literal segment after a wildcard one is kept without asking whether it exists; a `**`
/// segment is any depth (recursive in zsh and under `globstar`, through linked directories).
/// `None` when it cannot tell: an extended glob (`@(…)`), a leftover brace, more than
/// [`MAX_GLOB_ENTRIES`] names looked at or [`MAX_GLOB_PATHS`] paths named. The engine does no I/O: the hook and `check` give `list`.
pub fn expand_glob(
    glob: &str,
    mut list: impl FnMut(&str) -> Option<Vec<(String, bool)>>,
) -> Option<Vec<String>> {
    let mut paths = vec![String::new()];
    let mut looked_at = 0usize;
    let segments: Vec<&str> = glob.split('/').filter(|s| !s.is_empty()).collect();
    for (at, &segment) in segments.iter().enumerate() {
        if matches!(segment, "**" | "***") {
            // Any depth, the directory itself included (zsh, bash's `globstar`; plain bash
            // reads it as `*`, which this covers): every directory below, and every name when
            // it is the last segment.
            let last = at + 1 == segments.len();
            let mut next = Vec::new();
            let mut queue: std::collections::VecDeque<String> = paths.drain(..).collect();
            while let Some(dir) = queue.pop_front() {
                let names = list(if dir.is_empty() { "/" } else { &dir });
                next.push(dir.clone());
                for (name, may_be_dir) in names.into_iter().flatten() {
                    looked_at += 1;
                    if looked_at > MAX_GLOB_ENTRIES || next.len() > MAX_GLOB_ENTRIES {
                        return None;
                    }
                    let path = format!("{dir}/{name}");
                    if may_be_dir {
                        queue.push_back(path);
                    } else if last {
                        next.push(path);
                    }
                }
            }
            if last && next.len() > MAX_GLOB_PATHS {
                return None;
            }
            paths = next;
            continue;
        }
        if !is_glob(segment) {
            if segment.contains(['{', '(']) {
                return None;
            }
            for path in &mut paths {
                path.push('/');
                path.push_str(segment);
            }
            continue;
        }
        if segment.contains(['{', '(']) {
            return None;
        }
        let pattern = segment.to_ascii_lowercase();
        let mut next = Vec::new();
        for dir in &paths {
            let Some(names) = list(if dir.is_empty() { "/" } else { dir }) else {
                continue;
            };
            looked_at += names.len();
            if looked_at > MAX_GLOB_ENTRIES {
                return None;
            }
            for (name, _) in names {
                if segment_matches(&pattern, &name.to_ascii_lowercase()) {
                    next.push(format!("{dir}/{name}"));
                }
            }
            if next.len() > MAX_GLOB_PATHS {
                return None;
            }
        }
        paths = next;
    }
    paths.retain(|p| !p.is_empty());
    (paths.len() <= MAX_GLOB_PATHS).then_some(paths)
}

/// A path the shell would still expand against the file system.
pub(crate) fn is_glob(path: &str) -> bool {
    // By byte: a search for a set of characters goes character by character through the
    // pattern machinery.
    path.bytes().any(|b| matches!(b, b'*' | b'?' | b'['))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string of up to `max` bytes over `alphabet`.
    fn strings(alphabet: &[u8], max: usize) -> Vec<Vec<u8>> {
        let mut all = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..max {
            last = last
                .iter()
                .flat_map(|s| {
                    alphabet.iter().map(move |&b| {
                        let mut longer = s.clone();
                        longer.push(b);
                        longer
                    })
                })
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    /// The first- and last-byte test before the matcher never changes its answer.
    #[test]
    fn the_end_bytes_test_agrees_with_the_matcher() {
        let names = strings(b"ab[]", 4);
        for glob in strings(b"ab*?[]", 4) {
            let Ok(glob) = std::str::from_utf8(&glob) else {
                continue;
            };
            for name in &names {
                assert_eq!(
                    segment_matches_bytes(glob, name),
                    wildcard_match(glob.as_bytes(), name, [b'*', b'?', b'[', b']']),
                    "{glob} against {:?}",
                    String::from_utf8_lossy(name)
                );
            }
        }
    }
}
