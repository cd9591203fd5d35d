//! Vectors in the store: which observations, summaries and said events (a person's prompt, an
//! agent's closing answer, a note) still need one for a model, saving
//! them, and the in-memory matrix search scans (brute force beats an ANN index below a few
//! hundred thousand items; the shortlists measured against it lost results, see
//! docs/decisions/0005-exact-vector-scan.md; the rows are scanned as bytes, a quarter of f32's),
//! kept for a new process in a file beside the store (`file`).
//!
//! Vectors are stored per model, so switching models never compares vectors of two models;
//! a summary rewritten later loses its vector (a trigger) and is embedded again.
//!
//! A learned sparse model's vectors live in the same table, with `dim` 0 and the blob of
//! [`crate::embed::sparse_to_blob`], so the dense matrix never loads them. Search reads them
//! only for its candidates, by key ([`Store::sparse_vectors`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use rusqlite::params;

use super::{Result, Store};
use crate::embed::{Embedder, SparseEncoder, SparseVector, sparse_from_blob, sparse_to_blob};

mod file;

/// An observation, summary or said event waiting for its vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Unembedded {
    pub kind: &'static str,
    pub id: i64,
    pub text: String,
}

/// How far a walk over the items without a vector has come: the last observation, summary and
/// event it was handed. Each batch starts after the last, so a backlog is read once, not once per
/// batch from its start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedCursor {
    observation: i64,
    summary: i64,
    event: i64,
}

/// The kinds of event that get vectors: what a person or an agent said. Tool uses are many,
/// and found by their words; a session's start and end say nothing.
pub const SAID_EVENTS: &str = "('prompt', 'stop', 'note')";

/// Whether an event of `kind` is one of [`SAID_EVENTS`].
pub fn is_said(kind: &str) -> bool {
    matches!(kind, "prompt" | "stop" | "note")
}

/// Whether an item of `kind` and `item_type` gets vectors.
pub fn gets_vectors(kind: &str, item_type: &str) -> bool {
    match kind {
        "observation" | "summary" => true,
        "event" => is_said(item_type),
        _ => false,
    }
}

/// Where an event's row ids start among [`VectorIndex`]'s items: observations keep their id and
/// summaries their id negated, as vector files written before events had vectors hold them.
const EVENT_ITEMS: i64 = 1 << 48;

/// Every vector of one model, row after row, with the item each row belongs to. Rows are
/// kept as a signed byte per component and one scale per row (the row's largest magnitude
/// over 127): a quarter of the memory and of the bytes a search scans, for orderings that
/// match those of the full vectors but for near ties.
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    pub model: String,
    pub dim: usize,
    /// Each row's item: an observation's id, a summary's negated, an event's past
    /// [`EVENT_ITEMS`] (as the vector file keeps them, so that reading the file is a copy; a
    /// search names only its top rows).
    items: Vec<i64>,
    scales: Vec<f32>,
    /// The codes of the first rows, when they were left in the vector file: a process that
    /// searches once reads them through a small buffer as it scans, instead of faulting in
    /// memory for all of them (at 60,000 rows that was half the cost of reading the file).
    in_file: Option<Arc<file::Codes>>,
    /// `dim` codes per row (of the rows after those in the file), each an `i8` stored as its
    /// byte.
    codes: Vec<u8>,
}

impl VectorIndex {
    fn empty(model: &str, dim: usize) -> VectorIndex {
        VectorIndex { model: model.to_owned(), dim, ..VectorIndex::default() }
    }

    /// The last observation, summary and event with a row, so that a later read can take only
    /// what came after.
    fn last_ids(&self) -> [i64; 3] {
        self.items.iter().fold([0; 3], |[o, s, e], &item| match key(item) {
            ("summary", id) => [o, s.max(id), e],
            ("event", id) => [o, s, e.max(id)],
            (_, id) => [o.max(id), s, e],
        })
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds the row of `kind` `id`; a vector of another dimension is left out.
    fn push(&mut self, kind: &'static str, id: i64, row: &[f32]) {
        if row.len() != self.dim {
            return;
        }
        let scale = quantize(row, &mut self.codes);
        self.items.push(match kind {
            "summary" => -id,
            "event" => EVENT_ITEMS + id,
            _ => id,
        });
        self.scales.push(scale);
    }

    /// Appends every row of `other`, which has the same dimension and all its codes in memory.
    fn extend(&mut self, other: VectorIndex) {
        debug_assert!(other.in_file.is_none());
        self.items.extend(other.items);
        self.scales.extend(other.scales);
        self.codes.extend(other.codes);
    }

    /// The same rows with every code in memory, for a process that searches again and again.
    fn in_memory(&self) -> std::io::Result<VectorIndex> {
        let Some(in_file) = &self.in_file else { return Ok(self.clone()) };
        let mut codes = Vec::with_capacity(self.items.len() * self.dim);
        in_file.each_chunk(self.dim, |chunk| codes.extend_from_slice(chunk))?;
        codes.extend_from_slice(&self.codes);
        Ok(VectorIndex { in_file: None, codes, ..self.clone() })
    }

    /// The `k` rows most similar to `query` (cosine: rows and query are unit length), best
    /// first.
    pub fn top(&self, query: &[f32], k: usize) -> Vec<(&'static str, i64, f32)> {
        if query.len() != self.dim || self.dim == 0 || k == 0 {
            return Vec::new();
        }
        // The query in bytes as well: integer products are twice as many per instruction as
        // float ones, and its own rounding moves a score by less than the rows' does.
        let mut coded = Vec::with_capacity(self.dim);
        let query_scale = quantize(query, &mut coded);
        // With AVX2, the query is widened once for its 16-bit products.
        #[cfg(target_arch = "x86_64")]
        let avx2 = pulp::x86::V3::try_new()
            .map(|simd| (simd, coded.iter().map(|&c| i16::from(c as i8)).collect::<Vec<_>>()));
        // A bounded min-heap would save a sort, but k is small and selection is cheaper still.
        let mut scored: Vec<(usize, f32)> = Vec::with_capacity(self.len());
        let score = |scored: &mut Vec<(usize, f32)>, codes: &[u8]| {
            let scan = Scan { index: self, query: &coded, query_scale, codes, scored };
            #[cfg(target_arch = "x86_64")]
            if let Some((simd, wide)) = &avx2 {
                return simd.vectorize(ScanAvx2 { simd: *simd, wide, scan });
            }
            pulp::Arch::new().dispatch(scan)
        };
        if let Some(in_file) = &self.in_file
            && let Err(err) = in_file.each_chunk(self.dim, |chunk| score(&mut scored, chunk))
        {
            // The search goes on by its other channels.
            tracing::warn!(%err, "cannot read the vector file; searching without vectors");
            return Vec::new();
        }
        score(&mut scored, &self.codes);
        let k = k.min(scored.len());
        if k < scored.len() {
            scored.select_nth_unstable_by(k, |a, b| b.1.total_cmp(&a.1));
            scored.truncate(k);
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored
            .into_iter()
            .map(|(i, sim)| {
                let (kind, id) = key(self.items[i]);
                (kind, id, sim)
            })
            .collect()
    }
}

/// Appends `row` as a signed byte per component (stored as its byte), of the row's largest
/// magnitude over 127; returns that scale. A zero or non-finite row codes to zeros.
fn quantize(row: &[f32], codes: &mut Vec<u8>) -> f32 {
    let largest = row.iter().fold(0.0f32, |m, x| if x.abs() > m { x.abs() } else { m });
    let scale = if largest.is_finite() && largest > 0.0 { largest / 127.0 } else { 0.0 };
    let inverse = if scale > 0.0 { 1.0 / scale } else { 0.0 };
    // Rounded half away from zero by hand: `f32::round` is a library call per component, and
    // made reading 100,000 rows of 384 twice as slow. `as i8` saturates, and takes NaN to 0.
    codes.extend(row.iter().map(|x| {
        let v = x * inverse;
        (v + 0.5f32.copysign(v)) as i8 as u8
    }));
    scale
}

/// Scores `codes`, whole rows of `index` that follow those already in `scored`, against the
/// coded query. Run through `pulp`, which picks at run time the widest vector instructions the
/// processor has and compiles the loop for them; on x86-64 with AVX2, [`ScanAvx2`] instead.
struct Scan<'a> {
    index: &'a VectorIndex,
    query: &'a [u8],
    query_scale: f32,
    codes: &'a [u8],
    scored: &'a mut Vec<(usize, f32)>,
}

impl Scan<'_> {
    #[inline(always)]
    fn each_row(self, dot: impl Fn(&[u8]) -> i32) {
        let Scan { index, query_scale, codes, scored, .. } = self;
        for row in codes.chunks_exact(index.dim) {
            let i = scored.len();
            scored.push((i, index.scales[i] * query_scale * dot(row) as f32));
        }
    }
}

impl pulp::WithSimd for Scan<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let query = self.query;
        self.each_row(|row| dot_codes(query, row));
    }
}

/// The scan with AVX2's multiply-add of 16-bit pairs (`vpmaddwd`): sixteen products and their
/// pairwise sums an instruction. The compiler vectorizes [`dot_codes`] with 32-bit multiplies
/// (`vpmulld`, eight a time and slow), and this took the scan of 60,000 rows of 256 from 2.0
/// to 1.2 ms. The sums are exact, so the scores are the same.
#[cfg(target_arch = "x86_64")]
struct ScanAvx2<'a> {
    simd: pulp::x86::V3,
    /// The query's codes as `i16`.
    wide: &'a [i16],
    scan: Scan<'a>,
}

#[cfg(target_arch = "x86_64")]
impl pulp::NullaryFnOnce for ScanAvx2<'_> {
    type Output = ();

    #[inline(always)]
    fn call(self) {
        let ScanAvx2 { simd, wide, scan } = self;
        scan.each_row(|row| dot_codes_avx2(simd, wide, row));
    }
}

/// [`dot_codes`] of the query widened to `i16` and a row of codes, sixteen components a step.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dot_codes_avx2(simd: pulp::x86::V3, query: &[i16], row: &[u8]) -> i32 {
    use pulp::{bytemuck, i8x16, i16x16};
    const STEP: usize = 16;
    let n = query.len().min(row.len());
    let (query, row) = (&query[..n], &row[..n]);
    let (q_chunks, r_chunks) = (query.chunks_exact(STEP), row.chunks_exact(STEP));
    let tail: i32 = q_chunks
        .remainder()
        .iter()
        .zip(r_chunks.remainder())
        .map(|(&q, &r)| i32::from(q) * i32::from(r as i8))
        .sum();
    let mut sum = simd.splat_i32x8(0);
    for (q, r) in q_chunks.zip(r_chunks) {
        // `chunks_exact` gives slices of exactly STEP, so these never fail; the copies are
        // plain loads once compiled.
        let (Ok(q), Ok(r)) = (<[i16; STEP]>::try_from(q), <[u8; STEP]>::try_from(r)) else {
            continue;
        };
        let r = simd.convert_i8x16_to_i16x16(bytemuck::cast::<_, i8x16>(r));
        let products =
            simd.multiply_wrapping_add_adjacent_i16x16(bytemuck::cast::<_, i16x16>(q), r);
        sum = simd.wrapping_add_i32x8(sum, products);
    }
    bytemuck::cast::<_, [i32; 8]>(sum).iter().sum::<i32>() + tail
}

/// The dot product of two rows of codes (each byte an `i8`). Inlined into [`Scan`], so that
/// it is compiled for the instructions the scan runs with.
#[inline(always)]
fn dot_codes(a: &[u8], b: &[u8]) -> i32 {
    // Independent sums keep vector registers busy, as in `embed::dot`; the search scan runs
    // this once per stored row. Products of two bytes, summed over any model's dimensions,
    // stay far inside an i32.
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0i32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(&x, &y)| i32::from(x as i8) * i32::from(y as i8))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..LANES {
            acc[i] += i32::from(x[i] as i8) * i32::from(y[i] as i8);
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// Counts of the changes to one model's stored vectors (migration 0011): a vector file
/// written at these counts is current while `removed` is unchanged and only `added` grew.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Changes {
    added: i64,
    removed: i64,
}

/// The kind and id of a row's item, as [`VectorIndex::items`] keeps it.
fn key(item: i64) -> (&'static str, i64) {
    if item < 0 {
        ("summary", item.saturating_neg())
    } else if item >= EVENT_ITEMS {
        ("event", item - EVENT_ITEMS)
    } else {
        ("observation", item)
    }
}

fn kind_name(kind: &str) -> &'static str {
    match kind {
        "summary" => "summary",
        "event" => "event",
        _ => "observation",
    }
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// How long a process searches with the matrix it read before reading it whole again. In
/// between, each search adds the vectors of items newer than the newest it holds; what that
/// misses (a summary rewritten and embedded again under its id, an item deleted) waits for
/// the next whole read.
const SHARED_INDEX_AGE: Duration = Duration::from_secs(60);

/// How many rows added since a vector file was written make a search write it again: each
/// costs a process a row read from the store (about 2 µs), the file's rewrite costs about as
/// much as reading 1,000 of them.
const REWRITE_AFTER: usize = 256;

/// The matrices this process has read, by store file, model and dimension.
type SharedIndexes = HashMap<(PathBuf, String, usize), (Arc<VectorIndex>, Instant)>;

static SHARED_INDEXES: LazyLock<Mutex<SharedIndexes>> = LazyLock::new(Default::default);

impl Store {
    /// [`Store::vector_index`], kept for the life of the process: a server would otherwise read
    /// every stored vector for every search (140 ms at 17,500 observations, growing with the
    /// store). Each call adds what was embedded since; the whole matrix is read again once it
    /// is [`SHARED_INDEX_AGE`] old.
    pub fn shared_vector_index(&self, model: &str, dim: usize) -> Result<Arc<VectorIndex>> {
        if self.in_memory() {
            return Ok(Arc::new(self.vector_index(model, dim)?));
        }
        let key = (self.path.clone(), model.to_owned(), dim);
        let cached = SHARED_INDEXES.lock().ok().and_then(|shared| shared.get(&key).cloned());
        let (index, read_at) = match cached {
            Some((index, read_at)) if read_at.elapsed() < SHARED_INDEX_AGE => {
                let mut newer = VectorIndex::empty(model, dim);
                self.append_newer(&mut newer, model, index.last_ids())?;
                if newer.is_empty() && index.in_file.is_none() {
                    return Ok(index);
                }
                // A second search in this process: it keeps every code in memory from now on.
                let grown = match index.in_memory() {
                    Ok(mut grown) => {
                        grown.extend(newer);
                        grown
                    }
                    Err(err) => {
                        tracing::debug!(%err, "reading the stored vectors instead of their file");
                        self.vector_index(model, dim)?
                    }
                };
                (Arc::new(grown), read_at)
            }
            _ => (Arc::new(self.load_vector_index(model, dim)?), Instant::now()),
        };
        if let Ok(mut shared) = SHARED_INDEXES.lock() {
            shared.insert(key, (Arc::clone(&index), read_at));
        }
        Ok(index)
    }

    /// Adds the vectors of `model` of items newer than `after` (the last observation, summary
    /// and event already held): one primary-key range per kind. Returns how many rows there
    /// were, of any dimension.
    fn append_newer(&self, index: &mut VectorIndex, model: &str, after: [i64; 3]) -> Result<usize> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT item_kind, item_id, vec FROM vectors
             WHERE model = ?1 AND item_kind = ?2 AND item_id > ?3",
        )?;
        let mut read = 0;
        for (kind, after) in [("observation", after[0]), ("summary", after[1]), ("event", after[2])]
        {
            read += append_rows(index, &mut stmt.query(params![model, kind, after])?)?;
        }
        Ok(read)
    }

    /// The counts of changes to `model`'s stored vectors.
    fn vector_changes(&self, model: &str) -> Result<Changes> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT added, removed FROM vector_changes WHERE model = ?1")?;
        let mut rows = stmt.query([model])?;
        Ok(match rows.next()? {
            Some(row) => Changes { added: row.get(0)?, removed: row.get(1)? },
            None => Changes::default(),
        })
    }

    /// Every vector of `model`, from its vector file when that is current (with the rows added
    /// since read from the store), else from the store's rows. The file is written again when
    /// the rows had to be read, when many were added since it was written, or when `refresh`
    /// asks and anything was. Failing to read or write it costs speed, never the search.
    fn current_vector_index(&self, model: &str, dim: usize, refresh: bool) -> Result<VectorIndex> {
        // One read transaction: the counts and the rows are of the same moment.
        let tx = self.conn().unchecked_transaction()?;
        let changes = self.vector_changes(model)?;
        let path = file::path(&self.path, model, dim);
        let from_file = match file::read(&path, model, dim) {
            Ok(found) => found,
            Err(err) => {
                tracing::debug!(path = %path.display(), %err, "cannot read the vector file");
                None
            }
        };
        let mut added_since = None;
        let mut index = None;
        if let Some((mut held, at)) = from_file
            && at.removed == changes.removed
            && at.added <= changes.added
        {
            let after = held.last_ids();
            let read = self.append_newer(&mut held, model, after)?;
            // Rows added for items older than the file's newest cannot be found by id; the
            // counts tell that they exist.
            if read as i64 == changes.added - at.added {
                added_since = Some(read);
                index = Some(held);
            }
        }
        let index = match index {
            Some(index) => index,
            None => self.vector_index(model, dim)?,
        };
        drop(tx);
        let write = match added_since {
            None => true,
            Some(added) => added >= REWRITE_AFTER || (refresh && added > 0),
        };
        if !write {
            return Ok(index);
        }
        let index = match index.in_memory() {
            Ok(index) => index,
            Err(err) => {
                tracing::debug!(path = %path.display(), %err, "cannot read the vector file");
                self.vector_index(model, dim)?
            }
        };
        if let Err(err) = file::write(&path, &index, changes) {
            tracing::debug!(path = %path.display(), %err, "cannot write the vector file");
        }
        Ok(index)
    }

    /// Every vector of `model` as a process without a matrix of its own reads them: from the
    /// vector file when it is current, else from the rows (writing the file).
    pub fn load_vector_index(&self, model: &str, dim: usize) -> Result<VectorIndex> {
        if self.in_memory() {
            return self.vector_index(model, dim);
        }
        self.current_vector_index(model, dim, false)
    }

    /// Brings `model`'s vector file up to date with the store, so that the next process to
    /// search reads it whole: the work pass calls it after embedding.
    pub fn refresh_vector_file(&self, model: &str, dim: usize) -> Result<()> {
        if !self.in_memory() {
            self.current_vector_index(model, dim, true)?;
        }
        Ok(())
    }

    /// Up to `limit` observations, then summaries, with no vector of `model` yet, oldest first,
    /// after those `cursor` was handed before; moves `cursor` past them.
    pub fn unembedded(
        &self,
        model: &str,
        cursor: &mut EmbedCursor,
        limit: usize,
    ) -> Result<Vec<Unembedded>> {
        let mut out = Vec::new();
        let mut stmt = self.conn().prepare_cached(
            "SELECT o.id, o.title, o.subtitle, o.narrative, o.facts FROM observations o
             WHERE o.id > ?3 AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ?1
                               AND v.item_kind = 'observation' AND v.item_id = o.id)
             ORDER BY o.id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![model, limit as i64, cursor.observation], |r| {
            let facts: Vec<String> =
                serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or_default();
            let (title, subtitle, narrative): (String, String, String) =
                (r.get(1)?, r.get(2)?, r.get(3)?);
            let mut parts = vec![title.as_str(), subtitle.as_str(), narrative.as_str()];
            parts.extend(facts.iter().map(String::as_str));
            Ok(Unembedded {
                kind: "observation",
                id: r.get(0)?,
                text: crate::embed::item_text(&parts),
            })
        })?;
        for row in rows {
            out.push(row?);
        }
        if let Some(last) = out.last() {
            cursor.observation = last.id;
        }
        if out.len() >= limit {
            return Ok(out);
        }
        let mut stmt = self.conn().prepare_cached(
            "SELECT m.id, m.request, m.learned, m.completed FROM summaries m
             WHERE m.id > ?3 AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ?1
                               AND v.item_kind = 'summary' AND v.item_id = m.id)
             ORDER BY m.id LIMIT ?2",
        )?;
        let summaries = (limit - out.len()) as i64;
        let rows = stmt.query_map(params![model, summaries, cursor.summary], |r| {
            let request: String = r.get(1)?;
            let mut lists: Vec<String> = Vec::new();
            for col in [2, 3] {
                let items: Vec<String> =
                    serde_json::from_str(&r.get::<_, String>(col)?).unwrap_or_default();
                lists.extend(items);
            }
            let mut parts = vec![request.as_str()];
            parts.extend(lists.iter().map(String::as_str));
            Ok(Unembedded { kind: "summary", id: r.get(0)?, text: crate::embed::item_text(&parts) })
        })?;
        for row in rows {
            let row = row?;
            cursor.summary = row.id;
            out.push(row);
        }
        if out.len() >= limit {
            return Ok(out);
        }
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT e.id, e.summary, e.body FROM events e INDEXED BY events_said
             WHERE e.kind IN {SAID_EVENTS} AND e.id > ?3
               AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ?1
                               AND v.item_kind = 'event' AND v.item_id = e.id)
             ORDER BY e.id LIMIT ?2"
        ))?;
        let events = (limit - out.len()) as i64;
        let rows = stmt.query_map(params![model, events, cursor.event], |r| {
            let (summary, body): (String, String) = (r.get(1)?, r.get(2)?);
            let said = if body.trim().is_empty() { summary } else { body };
            Ok(Unembedded { kind: "event", id: r.get(0)?, text: crate::embed::item_text(&[&said]) })
        })?;
        for row in rows {
            let row = row?;
            cursor.event = row.id;
            out.push(row);
        }
        Ok(out)
    }

    /// How many items have a vector of `model`, and how many have none yet.
    pub fn vector_coverage(&self, model: &str) -> Result<(i64, i64)> {
        let have: i64 = self.conn().query_row(
            "SELECT count(*) FROM vectors WHERE model = ?1",
            [model],
            |r| r.get(0),
        )?;
        let total: i64 = self.conn().query_row(
            &format!(
                "SELECT (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries)
                      + (SELECT count(*) FROM events INDEXED BY events_said
                         WHERE kind IN {SAID_EVENTS})"
            ),
            [],
            |r| r.get(0),
        )?;
        Ok((have, (total - have).max(0)))
    }

    /// Stores vectors of `model`, replacing any earlier ones of the same items.
    pub fn save_vectors(&mut self, model: &str, vectors: &[(&str, i64, Vec<f32>)]) -> Result<()> {
        let tx = self.begin_write()?;
        {
            let mut stmt = tx.prepare_cached(
                // An upsert, not INSERT OR REPLACE: a replaced row fires no trigger, and the
                // vector file must learn that the row changed (migration 0011).
                "INSERT INTO vectors (item_kind, item_id, model, dim, vec)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (model, item_kind, item_id)
                 DO UPDATE SET dim = excluded.dim, vec = excluded.vec",
            )?;
            for (kind, id, v) in vectors {
                stmt.execute(params![kind_name(kind), id, model, v.len() as i64, to_blob(v)])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Stores sparse vectors of `model`, replacing any earlier ones of the same items.
    pub fn save_sparse(
        &mut self,
        model: &str,
        vectors: &[(&str, i64, SparseVector)],
    ) -> Result<()> {
        let tx = self.begin_write()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO vectors (item_kind, item_id, model, dim, vec)
                 VALUES (?1, ?2, ?3, 0, ?4)
                 ON CONFLICT (model, item_kind, item_id)
                 DO UPDATE SET dim = excluded.dim, vec = excluded.vec",
            )?;
            for (kind, id, v) in vectors {
                stmt.execute(params![kind_name(kind), id, model, sparse_to_blob(v)])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The sparse vectors of `model` stored for `items` (observations, summaries and said
    /// events; memories have none), read by key: the cost is bounded by the items asked for.
    pub fn sparse_vectors(
        &self,
        model: &str,
        items: &[(&'static str, i64)],
    ) -> Result<HashMap<(&'static str, i64), SparseVector>> {
        let mut out = HashMap::new();
        let mut stmt = self.conn().prepare_cached(
            "SELECT vec FROM vectors WHERE model = ?1 AND item_kind = ?2 AND item_id = ?3 AND dim = 0",
        )?;
        for &(kind, id) in items {
            if !matches!(kind, "observation" | "summary" | "event") {
                continue;
            }
            let mut rows = stmt.query(params![model, kind, id])?;
            if let Some(row) = rows.next()?
                && let Ok(blob) = row.get_ref(0)?.as_blob()
            {
                out.insert((kind, id), sparse_from_blob(blob));
            }
        }
        Ok(out)
    }

    /// Whether anything is stored with `model`: a search with a model nothing was encoded with
    /// yet skips it rather than mix in nothing.
    pub fn has_vectors(&self, model: &str) -> Result<bool> {
        let mut stmt =
            self.conn().prepare_cached("SELECT 1 FROM vectors WHERE model = ?1 LIMIT 1")?;
        Ok(stmt.exists([model])?)
    }

    /// Forgets every vector of `model` (before embedding everything again).
    pub fn drop_vectors(&mut self, model: &str) -> Result<usize> {
        let dropped = self.conn().execute("DELETE FROM vectors WHERE model = ?1", [model])?;
        file::remove_model(&self.path, model);
        Ok(dropped)
    }

    /// Reads every vector of `model` from the store's rows into one matrix. Rows of another
    /// dimension (a model reinstalled with a different size under the same name) are left out.
    pub fn vector_index(&self, model: &str, dim: usize) -> Result<VectorIndex> {
        let mut index = VectorIndex::empty(model, dim);
        let mut stmt = self.conn().prepare_cached(
            "SELECT item_kind, item_id, vec FROM vectors WHERE model = ?1 AND dim = ?2",
        )?;
        append_rows(&mut index, &mut stmt.query(params![model, dim as i64])?)?;
        Ok(index)
    }
}

/// Adds each row (`item_kind`, `item_id`, `vec`) whose vector has the index's dimension;
/// returns how many rows were read, of any dimension.
fn append_rows(index: &mut VectorIndex, rows: &mut rusqlite::Rows<'_>) -> Result<usize> {
    let mut read = 0;
    let mut row_buf = Vec::with_capacity(index.dim);
    while let Some(row) = rows.next()? {
        read += 1;
        let Ok(blob) = row.get_ref(2)?.as_blob() else { continue };
        if index.dim == 0 || blob.len() != index.dim * 4 {
            continue;
        }
        row_buf.clear();
        row_buf.extend(blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        let kind = kind_name(row.get_ref(0)?.as_str().unwrap_or_default());
        index.push(kind, row.get(1)?, &row_buf);
    }
    Ok(read)
}

/// What one embedding pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmbedPass {
    pub embedded: usize,
    /// Items still without a vector after the pass.
    pub left: i64,
}

/// Why an embedding pass stopped.
#[derive(Debug, thiserror::Error)]
pub enum EmbedPassError {
    #[error(transparent)]
    Store(#[from] super::StoreError),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
}

/// Embeds up to `limit` stored items that have no vector of `embedder`'s model yet, `batch`
/// at a time, calling `progress(done, total)` after each batch.
pub fn embed_pending(
    store: &mut Store,
    embedder: &dyn Embedder,
    batch: usize,
    limit: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> std::result::Result<EmbedPass, EmbedPassError> {
    let pass = pending_pass(
        store,
        embedder.model(),
        batch,
        limit,
        progress,
        &mut |store, items, texts| {
            let vectors = embedder.embed(texts)?;
            let rows: Vec<(&str, i64, Vec<f32>)> =
                items.iter().zip(vectors).map(|(i, v)| (i.kind, i.id, v)).collect();
            Ok(store.save_vectors(embedder.model(), &rows)?)
        },
    )?;
    // Also when nothing was embedded: a file left behind by a forget is written again without
    // the forgotten items' vectors, and the cost of a current file is reading it.
    store.refresh_vector_file(embedder.model(), embedder.dimensions())?;
    Ok(pass)
}

/// Encodes up to `limit` stored items that have no sparse vector of `encoder`'s model yet,
/// as [`embed_pending`] does for dense vectors.
pub fn encode_pending(
    store: &mut Store,
    encoder: &dyn SparseEncoder,
    batch: usize,
    limit: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> std::result::Result<EmbedPass, EmbedPassError> {
    pending_pass(store, encoder.model(), batch, limit, progress, &mut |store, items, texts| {
        let vectors = encoder.encode(texts)?;
        let rows: Vec<(&str, i64, SparseVector)> =
            items.iter().zip(vectors).map(|(i, v)| (i.kind, i.id, v)).collect();
        Ok(store.save_sparse(encoder.model(), &rows)?)
    })
}

/// Saves one batch of items with the texts they are encoded from.
type SaveBatch<'a> =
    dyn FnMut(&mut Store, &[Unembedded], &[&str]) -> std::result::Result<(), EmbedPassError> + 'a;

/// Walks the items without a vector of `model`, `batch` at a time, up to `limit`, handing each
/// batch to `save`.
fn pending_pass(
    store: &mut Store,
    model: &str,
    batch: usize,
    limit: usize,
    progress: &mut dyn FnMut(usize, usize),
    save: &mut SaveBatch<'_>,
) -> std::result::Result<EmbedPass, EmbedPassError> {
    let model = model.to_owned();
    let (_, missing) = store.vector_coverage(&model)?;
    let total = (missing.max(0) as usize).min(limit);
    let mut done = 0;
    let mut cursor = EmbedCursor::default();
    while done < total {
        let items = store.unembedded(&model, &mut cursor, batch.max(1).min(total - done))?;
        if items.is_empty() {
            break;
        }
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        save(store, &items, &texts)?;
        done += items.len();
        progress(done, total);
    }
    let (_, left) = store.vector_coverage(&model)?;
    Ok(EmbedPass { embedded: done, left })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_said_gets_vectors_beside_distilled_items_and_tool_uses_do_not() {
        let mut store = Store::open_in_memory().expect("store");
        store
            .conn()
            .execute_batch(
                "INSERT INTO sessions (id, agent, source_id, started_at, last_event_at)
                 VALUES (1, 'codex', 's1', 0, 0);
                 INSERT INTO events (id, uid, session_id, agent, kind, source_event, at, summary,
                                     body, content_hash)
                 VALUES (1, 'a', 1, 'codex', 'session_start', 'x', 0, 'Session started', '', 'h1'),
                        (2, 'b', 1, 'codex', 'prompt', 'x', 1, 'Prompt: use tabs', 'use tabs', 'h2'),
                        (3, 'c', 1, 'codex', 'tool_use', 'x', 2, 'Ran ls', 'ls', 'h3'),
                        (4, 'd', 1, 'codex', 'stop', 'x', 3, 'Answered', 'Tabs it is', 'h4');",
            )
            .expect("rows");
        let mut cursor = EmbedCursor::default();
        let handed = store.unembedded("m", &mut cursor, 10).expect("batch");
        let handed: Vec<(&str, i64, &str)> =
            handed.iter().map(|i| (i.kind, i.id, i.text.as_str())).collect();
        assert_eq!(handed, [("event", 2, "use tabs"), ("event", 4, "Tabs it is")]);
        assert_eq!(store.vector_coverage("m").expect("coverage"), (0, 2));
        store
            .save_vectors("m", &[("event", 2, vec![1.0, 0.0]), ("event", 4, vec![0.0, 1.0])])
            .expect("saved");
        store.save_vectors("m", &[("observation", 2, vec![0.6, 0.8])]).expect("saved");
        // The matrix tells an event from the observation of the same id.
        let index = store.vector_index("m", 2).expect("index");
        let top = index.top(&[1.0, 0.0], 3);
        let kinds: Vec<(&str, i64)> = top.iter().map(|(k, id, _)| (*k, *id)).collect();
        assert_eq!(kinds, [("event", 2), ("observation", 2), ("event", 4)]);
        assert_eq!(index.last_ids(), [2, 0, 4]);
        // A vector goes with its event.
        store.conn().execute("DELETE FROM events WHERE id = 2", []).expect("delete");
        assert_eq!(store.vector_index("m", 2).expect("index").len(), 2);
    }

    #[test]
    fn a_backlog_is_handed_out_once_in_batches_and_what_has_a_vector_is_left_out() {
        let mut store = Store::open_in_memory().expect("store");
        store
            .conn()
            .execute_batch(
                "INSERT INTO sessions (id, agent, source_id, started_at, last_event_at)
                 VALUES (1, 'codex', 's1', 0, 0), (2, 'codex', 's2', 0, 0);
                 INSERT INTO observations (id, session_id, agent, mode, kind, title, at, tokens,
                                           work_tokens, distiller, source_key)
                 VALUES (1, 1, 'codex', 'code', 'discovery', 'one', 1, 1, 1, 'offline', 'k1'),
                        (2, 1, 'codex', 'code', 'discovery', 'two', 2, 1, 1, 'offline', 'k2'),
                        (3, 1, 'codex', 'code', 'discovery', 'three', 3, 1, 1, 'offline', 'k3');
                 INSERT INTO summaries (id, session_id, agent, mode, request, at,
                                        through_event_id, tokens, work_tokens, distiller)
                 VALUES (1, 1, 'codex', 'code', 'first', 4, 0, 1, 1, 'offline'),
                        (2, 2, 'codex', 'code', 'second', 5, 0, 1, 1, 'offline');",
            )
            .expect("rows");
        store.save_vectors("m", &[("observation", 2, vec![1.0, 0.0])]).expect("saved");
        let mut cursor = EmbedCursor::default();
        let mut handed = Vec::new();
        loop {
            let batch = store.unembedded("m", &mut cursor, 2).expect("batch");
            if batch.is_empty() {
                break;
            }
            assert!(batch.len() <= 2);
            handed.extend(batch.into_iter().map(|item| (item.kind, item.id)));
        }
        assert_eq!(
            handed,
            [("observation", 1), ("observation", 3), ("summary", 1), ("summary", 2)]
        );
        // Another model's walk starts over and sees every item.
        let mut other = EmbedCursor::default();
        assert_eq!(store.unembedded("other", &mut other, 10).expect("all").len(), 5);
    }

    fn angle(a: f32) -> Vec<f32> {
        vec![a.cos(), a.sin()]
    }

    fn has(index: &VectorIndex, kind: &str, id: i64) -> bool {
        index.items.iter().any(|&item| key(item) == (kind, id))
    }

    #[test]
    fn the_vector_file_is_read_only_while_the_counts_of_changes_say_it_is_current() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("memory.db");
        let mut store = Store::open(&db, std::time::Duration::from_secs(1)).expect("open");
        let saved = [
            ("observation", 1, angle(0.1)),
            ("observation", 2, angle(0.5)),
            ("summary", 1, angle(1.0)),
        ];
        store.save_vectors("m", &saved).expect("save");
        let path = file::path(&db, "m", 2);

        // No file yet: the rows are read, and the file is written from them.
        let first = store.current_vector_index("m", 2, false).expect("index");
        assert_eq!(first.len(), 3);
        let (from_file, at) = file::read(&path, "m", 2).expect("read").expect("a file");
        let from_file = from_file.in_memory().expect("codes");
        assert_eq!((&from_file.items, &from_file.codes), (&first.items, &first.codes));
        assert_eq!(at, store.vector_changes("m").expect("changes"));
        assert!(file::read(&path, "m", 3).expect("read").is_none(), "another size is not it");

        // A newer item comes from its row; a few of them do not rewrite the file, a refresh does.
        store.save_vectors("m", &[("observation", 3, angle(0.2))]).expect("save");
        let bytes = std::fs::read(&path).expect("file");
        let grown = store.current_vector_index("m", 2, false).expect("index");
        assert!(grown.len() == 4 && has(&grown, "observation", 3));
        // The file's rows are scanned from the file, the newer one from memory, in one order.
        assert!(grown.in_file.is_some() && grown.codes.len() == 2);
        let query = angle(0.25);
        assert_eq!(grown.top(&query, 4), grown.in_memory().expect("codes").top(&query, 4));
        assert_eq!(grown.top(&query, 1)[0].1, 3);
        assert_eq!(std::fs::read(&path).expect("file"), bytes, "not rewritten for one row");
        store.refresh_vector_file("m", 2).expect("refresh");
        assert_eq!(file::read(&path, "m", 2).expect("read").expect("file").0.len(), 4);

        // A vector added for an item older than the file's newest cannot be found by id: the
        // counts show it, and the rows are read.
        store.save_vectors("m", &[("observation", 10, angle(0.3))]).expect("save");
        store.refresh_vector_file("m", 2).expect("refresh");
        store.save_vectors("m", &[("observation", 5, angle(0.4))]).expect("save");
        let late = store.current_vector_index("m", 2, false).expect("index");
        assert!(late.len() == 6 && has(&late, "observation", 5), "{:?}", late.items);

        // A removed row (its observation forgotten) and a rewritten one: the file is not
        // trusted, and is written again from the rows.
        store
            .conn()
            .execute("DELETE FROM vectors WHERE item_kind = 'observation' AND item_id = 2", [])
            .expect("delete");
        let removed = store.current_vector_index("m", 2, false).expect("index");
        assert!(!has(&removed, "observation", 2) && removed.len() == 5);
        assert!(!has(&file::read(&path, "m", 2).expect("read").expect("file").0, "observation", 2));
        store.save_vectors("m", &[("observation", 1, angle(1.4))]).expect("rewrite");
        let rewritten = store.current_vector_index("m", 2, false).expect("index");
        assert_eq!(rewritten.top(&angle(1.4), 1)[0].1, 1, "the rewritten vector is searched");

        // A file cut short, or of something else, is ignored and written again.
        crate::fsutil::write_atomic(&path, b"AMVEC001 cut short").expect("garbage");
        assert_eq!(store.current_vector_index("m", 2, false).expect("index").len(), 5);
        assert_eq!(file::read(&path, "m", 2).expect("read").expect("file").0.len(), 5);

        // Dropping the model's vectors takes its files too.
        store.drop_vectors("m").expect("drop");
        assert!(!path.exists());
        assert!(store.current_vector_index("m", 2, false).expect("index").is_empty());
    }

    #[test]
    fn a_process_scans_the_file_once_and_keeps_the_codes_in_memory_when_it_searches_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("memory.db");
        let mut store = Store::open(&db, std::time::Duration::from_secs(1)).expect("open");
        let saved: Vec<(&str, i64, Vec<f32>)> =
            (1..=30).map(|id| ("observation", id, angle(id as f32 / 5.0))).collect();
        store.save_vectors("m", &saved).expect("save");
        store.refresh_vector_file("m", 2).expect("file");
        let once = store.shared_vector_index("m", 2).expect("index");
        assert!(once.in_file.is_some() && once.codes.is_empty(), "the codes stay in the file");
        let best = once.top(&angle(3.0), 3);
        let mut ids: Vec<i64> = best.iter().map(|b| b.1).collect();
        assert_eq!(ids[0], 15, "{best:?}");
        ids.sort_unstable();
        assert_eq!(ids, [14, 15, 16]);
        let again = store.shared_vector_index("m", 2).expect("index");
        assert!(again.in_file.is_none() && again.len() == 30);
        assert_eq!(again.top(&angle(3.0), 3), best);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_products_are_the_plain_ones() {
        let Some(simd) = pulp::x86::V3::try_new() else { return };
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut byte = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 56) as u8
        };
        // Dimensions with and without a tail past the last step of sixteen, and the extremes
        // of a byte, whose products are the largest.
        for dim in [1, 7, 16, 31, 64, 100, 256, 384, 1024] {
            let mut rows: Vec<Vec<u8>> =
                (0..40).map(|_| (0..dim).map(|_| byte()).collect()).collect();
            rows.push(vec![0x80; dim]);
            rows.push(vec![0x7f; dim]);
            rows.push((0..dim).map(|i| if i % 2 == 0 { 0x80 } else { 0x7f }).collect());
            for query in &rows {
                let wide: Vec<i16> = query.iter().map(|&c| i16::from(c as i8)).collect();
                for row in &rows {
                    let avx2 = simd.vectorize(|| dot_codes_avx2(simd, &wide, row));
                    assert_eq!(avx2, dot_codes(query, row), "dimension {dim}");
                }
            }
        }
    }

    #[test]
    fn byte_codes_rank_rows_as_their_full_vectors_do() {
        const DIM: usize = 64;
        // A fixed pseudo-random sequence: the test needs spread, not chance.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let mut unit = |n: usize| {
            let mut v: Vec<f32> = (0..n).map(|_| next()).collect();
            crate::embed::normalize(&mut v);
            v
        };
        let rows: Vec<Vec<f32>> = (0..500).map(|_| unit(DIM)).collect();
        let mut index = VectorIndex::empty("m", DIM);
        for (i, row) in rows.iter().enumerate() {
            index.push("observation", i as i64, row);
        }
        for _ in 0..20 {
            let query = unit(DIM);
            let mut exact: Vec<(i64, f32)> = rows
                .iter()
                .enumerate()
                .map(|(i, row)| (i as i64, crate::embed::dot(row, &query)))
                .collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1));
            let coded = index.top(&query, 10);
            assert_eq!(coded[0].1, exact[0].0, "the best row is the best row");
            let shared = coded.iter().filter(|c| exact[..10].iter().any(|e| e.0 == c.1)).count();
            assert!(shared >= 9, "top 10 share {shared}");
            for (_, id, sim) in coded {
                let truth = exact.iter().find(|e| e.0 == id).expect("row").1;
                assert!((sim - truth).abs() < 0.01, "{sim} against {truth}");
            }
        }
    }
}
