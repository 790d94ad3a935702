#!/usr/bin/env bash
# Writes a source tree from a git snapshot (a bare repository, e.g. what the fetch tool leaves in
# /work/.mirror/Tencent+ncnn/repo) for bench/peers/build_{ncnn,mnn}.sh, which take source trees by path.
#
#   bench/peers/extract_snapshot.sh GIT_DIR DEST [PATH...]
#
# Only the listed top-level paths are written (all of HEAD when none are given). Snapshots may lack some
# large blobs (models, generated GPU shaders); those files are left out and listed, so that a build which
# needs one fails on a named file rather than here. The commit goes into DEST/.snapshot-commit.
set -euo pipefail

if (($# < 2)); then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
GIT_DIR_IN="$1" DEST="$2"
shift 2
paths=("$@")
((${#paths[@]})) || mapfile -t paths < <(git -C "$GIT_DIR_IN" ls-tree HEAD --name-only)

commit="$(git -C "$GIT_DIR_IN" rev-parse HEAD)"
# Blobs under the paths that the snapshot does not hold.
mapfile -t missing < <(git -C "$GIT_DIR_IN" ls-tree -r HEAD -- "${paths[@]}" |
  awk '$2 == "blob" { print $3 "\t" $4 }' |
  git -C "$GIT_DIR_IN" cat-file --batch-check='%(objectname) %(objecttype) %(rest)' 2>/dev/null |
  awk '$2 == "missing" { print $1 }' | sort -u)
excludes=()
if ((${#missing[@]})); then
  declare -A is_missing=()
  for h in "${missing[@]}"; do is_missing[$h]=1; done
  while IFS=$'\t' read -r meta file; do
    h="${meta##* }"
    if [[ -n "${is_missing[$h]:-}" ]]; then
      excludes+=(":(exclude,literal)$file")
      echo "extract_snapshot: not in the snapshot, left out: $file" >&2
    fi
  done < <(git -C "$GIT_DIR_IN" ls-tree -r HEAD -- "${paths[@]}" | awk '$2 == "blob"')
fi

mkdir -p "$DEST"
git -C "$GIT_DIR_IN" archive --format=tar HEAD -- "${paths[@]}" "${excludes[@]}" | tar -x -C "$DEST"
echo "$commit" > "$DEST/.snapshot-commit"
echo "extract_snapshot: $commit (${paths[*]}) -> $DEST" >&2
