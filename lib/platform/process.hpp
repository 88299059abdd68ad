// Process-level settings for programs built on dkp (the dkp binary, examples/, your own):
// allocator tuning (DESIGN.md section 7; the BLAS thread count is platform::set_blas_threads). Call
// both at the start of main.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace dkp::platform {

/// Raises glibc's mmap and trim thresholds so that large temporaries in the training loop reuse
/// heap pages instead of mapping fresh ones on every step, and allows two malloc arenas. The
/// large blocks (P x B matrices) of every thread are kept by util/arma_alloc's per-thread cache,
/// so a worker's arena no longer empties at the end of a step (an emptied per-thread heap is
/// unmapped and faulted in again at the next step: with two arenas and no cache, 2x the page
/// faults and a slower depth-5 step); the second arena spares the threads each other's lock for
/// the small blocks (with one arena, some 300 context switches per 2-thread step on boston).
void tune_allocator();

/// This program's executable (the target of /proc/self/exe; that path itself when it cannot be
/// read): what the batch runner starts for each cell and what `dkp bench --flops` runs again.
std::filesystem::path self_executable();

/// The current UTC time as 2026-11-27T08:00:00Z (manifests, error.json, lock holders).
std::string now_iso8601();

/// This machine's host name ("unknown" when it cannot be read).
std::string hostname();

/// A duration for people: "1h 02m", "3m 20s", "12s" (rounded to the second; "?" when negative or
/// not finite), with `separator` between the units ("": "1h02m", as `dkp run`'s progress lines).
std::string format_duration(double seconds, std::string_view separator = " ");

}  // namespace dkp::platform
