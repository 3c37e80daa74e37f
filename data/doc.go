// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package data turns tabular files — Parquet, Arrow IPC (Feather version
// 2, with package data/arrowipc imported) and CSV — into the design matrix and response the exactmh energies
// take: x, N×d row-major, and y, for model.NewLogisticRegression(x, y,
// d), model.NewGLM(x, y, d, family), model.NewStudentTRegression and
// the rest.
//
// # Your own file in a few lines
//
//	f, err := data.ReadFile("flights.parquet", nil) // .parquet, .arrow/.feather/.ipc, .csv
//	if err != nil {
//		return err // names the file, and the columns it has if one is missing
//	}
//	d, err := data.Spec{
//		Response: data.Above("delay", 15), // y = 1 if delay > 15
//		Terms: []data.Term{
//			data.Log("distance"),                         // standardised log(distance)
//			data.HourOfDay("date"),                       // sin and cos of the hour
//			data.DayOfWeek("date"), data.Month("date"),   // one-hot, Monday and January the reference
//			data.Categorical("origin", data.TopK(10)),    // the 10 busiest airports, the rest "other"
//		},
//		DropMissing: true, // rows with a missing value go (d.Dropped counts them)
//	}.Build(f)
//	if err != nil {
//		return err // names the file, row, column and value at fault
//	}
//	e, err := model.NewLogisticRegression(d.X, d.Y, d.D)
//	post := &exactmh.Posterior{Energy: e, Names: d.Names} // names in Summary and Stan CSV
//	res, err := exactmh.Sample(ctx, post, nil, nil)        // the automatic exact kernel
//	fmt.Print(res.Summary())
//	// On the features' own scale (each draw, or a posterior mean):
//	beta := d.Unstandardize(res.Mean())
//
// A matrix already in memory goes through FromMatrix instead of a reader.
//
// # Frames, specs and designs
//
// A Frame is a table of typed columns (Float, Int, Bool, Time, String),
// each held in one slice of its type, with a mask for missing values
// (Parquet and Arrow nulls; in CSV an empty cell, NA, N/A, NaN, nan, null
// or NULL). ReadOptions select columns and limit the rows. A Spec names
// the response and the terms, and Build checks it against the Frame and
// computes the Design: X, Y, the column names ("Intercept",
// "log(distance)", "origin=ATL", "date.hour.sin", …) and the
// standardisation of each column (numeric features to mean 0 and standard
// deviation 1 unless Spec.NoStandardize; one-hot, indicator and
// hour-of-day columns are left as they are).
//
// Random and RandomSlopes are random-effect terms in lme4's notation —
// Random("origin") is (1 | origin), Random("origin", Log("distance")) is
// (1 + log(distance) || origin) with independent effects and
// Correlated(Random("origin", Log("distance"))) the correlated
// (1 + log(distance) | origin), "a:b" the interaction — which Build puts
// into Design.Groups (each row's level, every level present, the slopes'
// values), not into X: model.NewMultilevel takes them as they are, so no
// N × G matrix is built for a factor with thousands of levels.
//
// Type rules: Num, Log, Log1p and Above take Float, Int and Bool columns
// (a String column is an error saying which row is not a number);
// Categorical takes String, Int and Bool columns — a Float column is an
// error, since its distinct values are not categories —; HourOfDay,
// DayOfWeek and Month take Time columns, which hold wall-clock readings:
// the clock as written in a CSV file, the UTC clock of a Parquet or Arrow
// timestamp without a zone, and the local clock of one with a zone.
//
// Every error names the file (its base name, "matrix" for FromMatrix)
// and, where a value is at fault, the 1-based data row, the column and
// the value: a missing file or column, a wrong type, a non-numeric CSV
// value in a numeric term, a missing, NaN or infinite value (unless
// Spec.DropMissing), no rows (also after dropping), a constant column
// (its coefficient is not identifiable), the log of a non-positive
// value, two columns of one name.
//
// # Hostile files: what is guaranteed and what is not
//
// No file makes a reader or Build crash the process, hang or exhaust
// memory; each gets a Frame or an error. Concretely:
//
//   - A truncated or corrupted Parquet or Arrow file is an error, never a
//     panic. The Parquet reader is the package's own (parquet*.go,
//     thrift.go): every length, count and offset in the footer and the
//     page headers is checked against the bytes that hold it before
//     anything is allocated for it; every column chunk must lie inside
//     the file; a page may declare at most 1,024 times the file's size
//     uncompressed and no more than 64 MiB plus 64 times the file's size;
//     a page decompressing to more or fewer bytes than it declares is an
//     error; and pages are decoded in batches of 65,536 rows, so a page
//     of a few bytes declaring billions of values allocates nothing. For
//     Arrow files (package data/arrowipc) the calls into arrow-go are
//     guarded by recover, the flatbuffers are checked before arrow-go
//     reads them (every vector that arrow-go sizes a slice by must fit in
//     its buffer, every slot read as flatbuffers reads it), and arrow-go
//     allocates through an allocator that refuses any single allocation
//     larger than a file of that size could need.
//   - Compressed pages and buffers decode into the size their header
//     declares (itself capped as above), and no codec may allocate more
//     on the compressed stream's word: Snappy blocks declaring more than
//     the page are refused; zstd pages decode straight into the page,
//     their output and declared window limited to the larger of the page
//     and 8 MiB; Brotli pages (data/parquetcodecs) with the stream's
//     window lowered to what the page needs (a stream header declares up
//     to 16 MiB); and the zstd frames of Arrow IPC buffers may declare
//     windows of at most the buffer's length or 8 MiB (arrow-go's decoder
//     allocates twice the window: ten bytes asked for 1 GiB). gzip and
//     LZ4 decode into the page and allocate at most a 32 KiB window and
//     64 KiB header, and Arrow's LZ4 frames at most a pooled block of
//     8 MiB, the largest block size of pierrec/lz4 (TestPageCodecsBounded
//     and parquetcodecs' TestCodecsBounded cover the Parquet codecs).
//   - Memory grows with the rows a file holds, not with its size: a few
//     kilobytes of Parquet run-length encoding can declare billions of
//     rows. Before reading, the declared rows × columns are checked
//     against the memory available (the smallest of MemAvailable, the
//     cgroup's limit, GOMEMLIMIT and ulimit -v, of which 70% may be
//     taken, the rule the draws follow: internal/memavail), and
//     ReadOptions.Limit bounds them.
//   - Build refuses, before allocating it, a design larger than that
//     share of memory — a categorical term on a per-row identifier asks
//     for N × N × 8 bytes — naming the widest term and the remedies.
//   - CSV lines are capped at 64 MiB, a file whose last line has no
//     newline (cut mid-row, perhaps mid-number) is refused, and a file
//     that is not a regular file (a device such as /dev/zero, a pipe) is
//     refused unless ReadOptions.Special.
//   - A mapped Store or SparseStore whose file another process truncates
//     faults on the next read of the missing pages (SIGBUS). Their
//     Validate's reads are guarded (an error); the reads the energies
//     make while sampling are not, and kill the process: do not modify a
//     store file while it is open.
//
// FuzzReadParquet, FuzzReadArrow and FuzzReadCSV hold the readers to
// this, with a cap on what each input may allocate in all
// (fuzzAllocCap), and the tests of robust_test.go re-execute themselves
// under ulimit -v, where an allocation the input drives fails instead of
// passing on overcommit.
//
// What is not detected: a bit flipped in a Parquet or Arrow value (a
// number changed, a string's byte) reads as another valid value. Neither
// format carries checksums that the readers verify (Parquet's optional
// page CRCs are not checked), so such a file is read silently with the
// wrong value; only the file's own integrity (a checksum of the whole
// file from its producer) can tell. The same holds for a CSV file
// changed in place.
//
// # Speed
//
// The 3,000,000 flights of the repository's shared data (Parquet,
// 13 MB) load and build into the 36-column design above in 2.1–3.7 s in
// a fresh process on the 2-core development machine, measured while
// other jobs kept its load average at 6 to 9 (TestFlights logs the two
// phases: reading 0.8–1.7 s, Build 1.3–2.3 s; BenchmarkFlightsLoad
// repeats both, 5–7 s per load there, as each repetition maps another
// 1.4 GB). Parquet columns are read in parallel, a column per core, in
// batches of 65,536 rows, into typed slices,
// strings as codes into their distinct values; Build fills X in blocks of rows that stay in
// cache, one pass per term, on all cores, with no per-cell interface
// call or per-row allocation. Most of Build's time is the kernel mapping
// the 864 MB of fresh memory X needs (filling it once mapped takes
// under 0.1 s): the large slices are prefaulted with
// madvise(MADV_POPULATE_WRITE) on Linux (internal/prefault, which the
// root package's set-up arrays use too), which cut that cost by a factor
// of two to four on the development machine's virtual machine.
//
// # Dependencies: Parquet without arrow-go
//
// Parquet is how tall data are shipped (the flights, most public data
// sets of millions of rows). The package reads it with its own reader of
// the parts of the format that writers use by default (pyarrow, Polars,
// DuckDB, pandas, Spark, arrow-go): the Thrift compact protocol of the
// footer and page headers (thrift.go), data pages of versions 1 and 2,
// dictionary pages, the PLAIN encoding and the RLE/bit-packed hybrid of
// dictionary indices and definition levels (flat columns, required or
// optional), DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT numbers (which
// version 2 writers use when asked: parquet_delta.go), the physical types BOOLEAN, INT32, INT64, INT96, FLOAT,
// DOUBLE, BYTE_ARRAY (strings) and FIXED_LEN_BYTE_ARRAY(2) (Float16),
// and the codecs Snappy (parquet_codec.go, a page-sized decoder of the
// simple block format), gzip (compress/gzip) and zstd
// (github.com/klauspost/compress/zstd's decoder, limited to each page's
// declared size: the standard library has no public zstd decoder). Brotli and LZ4_RAW pages are read
// once package data/parquetcodecs is imported (RegisterParquetCodec), and
// Arrow IPC and Feather files once package data/arrowipc is: both use
// github.com/apache/arrow-go/v18's libraries, and the exactmh command
// imports both. DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY strings,
// which writers use only when asked, are an error naming the encoding.
//
// The reason is the first build. Through arrow-go, a program reading the
// bundled flights file downloaded arrow-go, Thrift, Flatbuffers,
// klauspost/compress, pierrec/lz4, andybalholm/brotli and their
// dependencies (412 MB of module cache) before compiling them; go run
// ./examples/quickstart now downloads exactmh's own dependencies only,
// gonum, klauspost/compress (for zstd) and golang.org/x/tools
// (figures/bench/firstbuild.txt; TestLightDependencies keeps it so). The values read are identical to
// arrow-go's: TestParquetDigests pins the digests of every value of
// testdata's files and of the 3-million-row flights file taken with
// arrow-go's pqarrow, TestParquetOracle compares the two readers on
// files arrow-go writes in every combination of page version,
// dictionary, codec and nulls, and FuzzParquetOracle on fuzzed files.
// One rule to know: a Parquet timestamp is read on the UTC clock, as
// Parquet records only whether it is UTC, even where a writer kept a time
// zone in the Arrow schema of the file's metadata.
//
// arrow-go is v18.8.0, whose IPC reader checks block offsets against the
// file size and has limits on message sizes (WithMetadataSizeLimit,
// WithBodySizeLimit), which data/arrowipc sets to the file's size. It
// requires Go 1.25, which is therefore the module's go directive. gonum
// (gonum.org/v1/gonum, already a dependency of exactmh) is used for
// mat.Matrix in FromMatrix.
package data
