//! The merge plan: consecutive layers grouped greedily while the group's running size stays
//! within the limit, and the image history re-aligned to the merged layers.

use std::ops::Range;

use serde_json::{Value, json};

/// Groups layer indices: walking the layers in order, a layer joins the current group while
/// the group's size with it stays ≤ `max` bytes, else it starts the next group. A layer
/// larger than `max` is a group of its own. Groups of one layer are kept as they are.
pub fn groups(sizes: &[u64], max: u64) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut running = 0u64;
    for (i, size) in sizes.iter().enumerate() {
        match out.last_mut() {
            Some(group) if running.saturating_add(*size) <= max => {
                group.end = i + 1;
                running += size;
            }
            _ => {
                out.push(i..i + 1);
                running = *size;
            }
        }
    }
    out
}

/// The history of an image whose layers are merged as `groups` (indices into the layers).
///
/// Each layer has one history entry without `empty_layer: true`, in order; for a merged
/// group, the entries of its layers but the last become `empty_layer` entries (their
/// `created_by` kept), and the last one carries the merged layer, its comment saying which
/// layers it holds. Entries that were already empty are kept as they were.
///
/// # Errors
///
/// A history whose layer entries do not match the layers one to one (the message says how
/// many of each).
pub fn realign(history: &[Value], groups: &[Range<usize>]) -> Result<Vec<Value>, String> {
    let is_layer = |h: &Value| h.get("empty_layer").and_then(Value::as_bool) != Some(true);
    let layers = history.iter().filter(|h| is_layer(h)).count();
    let total = groups.last().map_or(0, |g| g.end);
    if layers != total {
        return Err(format!(
            "its history has {layers} layer entries for {total} layers, so it cannot be re-aligned"
        ));
    }
    let mut out = Vec::with_capacity(history.len());
    let mut layer = 0;
    for entry in history {
        if !is_layer(entry) {
            out.push(entry.clone());
            continue;
        }
        let group = groups.iter().find(|g| g.contains(&layer)).expect("every layer is in a group");
        let mut entry = entry.clone();
        if group.len() > 1 {
            if layer + 1 < group.end {
                entry["empty_layer"] = json!(true);
            } else {
                entry["comment"] = json!(format!(
                    "charly box merge: layers {}-{} merged into one",
                    group.start,
                    group.end - 1
                ));
            }
        }
        out.push(entry);
        layer += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_greedy_and_consecutive() {
        assert_eq!(groups(&[1, 1, 1, 1], 2), vec![0..2, 2..4]);
        assert_eq!(groups(&[5, 1, 1, 9, 1], 4), vec![0..1, 1..3, 3..4, 4..5]);
        assert_eq!(groups(&[1, 2, 3], 100), vec![0..3]);
        assert_eq!(groups(&[], 100), Vec::<Range<usize>>::new());
    }

    #[test]
    fn history_keeps_one_layer_entry_per_layer() {
        let history = vec![
            json!({"created_by": "base"}),
            json!({"created_by": "ENV", "empty_layer": true}),
            json!({"created_by": "run 1"}),
            json!({"created_by": "run 2"}),
        ];
        let out = realign(&history, &[0..1, 1..3]).unwrap();
        assert_eq!(out[0], json!({"created_by": "base"}));
        assert_eq!(out[1], history[1]);
        assert_eq!(out[2], json!({"created_by": "run 1", "empty_layer": true}));
        assert_eq!(out[3]["comment"], "charly box merge: layers 1-2 merged into one");
        let one_group: Vec<Range<usize>> = std::iter::once(0..2).collect();
        assert!(realign(&history, &one_group).unwrap_err().contains("3 layer entries for 2 layers"));
    }
}
