// dropin/Trust.h: which files the drop-in believes (docs/dropin.md, "What
// the drop-in reads and believes"). Plan files and bundles (COLLC_PLAN_PATH),
// algorithm files (COLLC_LIBRARY), the rules file (COLLC_RULES) and proof
// records (COLLC_PROOF_CACHE) decide what runs, or what is believed proven;
// one that another user could have written is refused, as ssh refuses a key
// file others can write, unless COLLC_TRUSTED names it or a folder above it.
// MPI-free, LLVM-free.
#ifndef COLLC_DROPIN_TRUST_H
#define COLLC_DROPIN_TRUST_H

#include <string>
#include <vector>

namespace collc::dropin {

/// Why `path` (a file or a folder) must not be believed, or "" if it may.
/// It may not when it or any folder above it
///  - is owned by another user than this process's (effective) user or root;
///  - is writable by others, or by its group — except a folder with the
///    sticky bit (as /tmp: others cannot replace what is in it) and a group
///    that is this user's own private group (named as the user, no other
///    members).
/// Symbolic links are followed: what is checked is where they lead. A path
/// at or under an entry of `trusted` (COLLC_TRUSTED) is believed whatever
/// its owner and mode. A path that does not exist is "" (the reader says so).
std::string untrustedBecause(const std::string &path, const std::vector<std::string> &trusted);

/// The warning for a refused `path` named by `setting` ("COLLC_PLAN_PATH").
std::string untrustedWarning(const std::string &setting, const std::string &path,
                             const std::string &why);

} // namespace collc::dropin

#endif // COLLC_DROPIN_TRUST_H
