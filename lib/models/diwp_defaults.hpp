// Defaults of the deep inverse Wishart process that the model, the model factory, `dkp run` and
// the grid runner share (a header without dependencies, so the experiment layer can use it).
#pragma once

namespace dkp::models {

/// Initial delta of every DIWP inverse Wishart layer: e^4 (log delta = 4), the initial value in
/// one of the two versions of bayesfunc's IWLayer (the other starts at delta = 1). At delta = 1 the
/// diagonal of an IW(delta K, delta + P + 1) sample is InvGamma((delta + 2) / 2, delta k / 2)
/// distributed, with infinite variance; the SE kernel of the next layer turns those heavy-tailed
/// squared distances into a near-diagonal kernel, and the three-layer SE DIWP collapses to the
/// prior on yacht (docs/reproduction-notes.md#diwp-initial-delta). e^4 trains with both kernels.
inline constexpr double kDiwpDeltaInit = 54.598150033144236;

}  // namespace dkp::models
