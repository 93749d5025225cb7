"""Where tabular data lives: local files, directories (Hive-partitioned or not), globs,
``file://`` URLs and object stores (``s3://``, ``gs://``, any other fsspec protocol).

Every location resolves to a pyarrow filesystem and a list of files on it, in sorted path order.
Files are opened through that filesystem and read batch by batch (Parquet and Arrow files by
ranged reads, CSV as a stream): nothing is downloaded whole. Directory names of the Hive form
(``site=A``) are discovered by ``pyarrow.dataset`` and become columns of the data.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from datavet._io import glob_regex, split_glob
from datavet.errors import InputError
from datavet.sources.base import SchemaRestart, TabularSource

PARQUET_SUFFIXES = {".parquet", ".pq", ".parq"}
CSV_SUFFIXES = {".csv", ".tsv", ".tab"}
ARROW_SUFFIXES = {".arrow", ".arrows", ".feather", ".ipc"}
COMPRESSED_SUFFIXES = {".gz", ".bz2", ".zst", ".lz4"}
REFUSED_SUFFIXES = {".pkl", ".pickle", ".joblib"}
_FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "arrow": "Arrow/Feather"}
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_GLOB_CHARS = re.compile(r"[*?\[]")
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")
_GCS_RETRY_SECONDS = 15
_CURL_ERROR = re.compile(r"CURL error \[\d+\]=(.+?)(?: error_info=|$)")


def suffix_of(path: str) -> str:
    """The format suffix of a file name (``.csv`` for ``a.csv.gz``), lower case."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if len(suffixes) >= 2 and suffixes[-1] in COMPRESSED_SUFFIXES:
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""


def format_of(path: str) -> str | None:
    """``"parquet"``, ``"csv"``, ``"arrow"``, ``"pickle"`` by the name's suffix, or None."""
    kind = suffix_of(path)
    if kind in PARQUET_SUFFIXES:
        return "parquet"
    if kind in CSV_SUFFIXES:
        return "csv"
    if kind in ARROW_SUFFIXES:
        return "arrow"
    if kind in REFUSED_SUFFIXES:
        return "pickle"
    return None


def format_of_bytes(head: bytes) -> str | None:
    if head[:4] == b"PAR1":
        return "parquet"
    if head[:6] == b"ARROW1":
        return "arrow"
    return None


def open_input(filesystem: Any, path: str, *, stream: bool = False):
    """A file on ``filesystem`` opened for reading. pyarrow takes paths as UTF-8, so a local
    name that is not (``caf\\xe9.csv`` on Linux: a surrogate-escaped str) is opened by Python."""
    if isinstance(filesystem, pafs.LocalFileSystem) and not _utf8(path):
        return pa.PythonFile(open(path, "rb"), mode="r")  # noqa: SIM115 (closed with it)
    return filesystem.open_input_stream(path) if stream else filesystem.open_input_file(path)


def arrow_path(path: str) -> str:
    """``path`` as pyarrow can take it: a name that is not UTF-8 with its bytes escaped."""
    return path if _utf8(path) else os.fsencode(path).decode("utf-8", "backslashreplace")


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_url(data: object) -> bool:
    return isinstance(data, str) and _URL.match(data) is not None


def is_glob(text: str) -> bool:
    return _GLOB_CHARS.search(text) is not None


def _problem(exc: BaseException) -> str:
    text = str(exc).strip()
    curl = _CURL_ERROR.search(text)  # the GCS client's status dump: the network error in it
    if curl:
        return f"{curl.group(1).strip()}; gave up after retrying for {_GCS_RETRY_SECONDS} s"
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------------------------
# locations


@dataclass(frozen=True)
class Location:
    """What the user named, resolved: a filesystem and a path (file, directory or pattern)."""

    name: str  # as the user wrote it: error messages name it
    filesystem: Any  # a pyarrow FileSystem
    path: str  # on that filesystem; absolute for local paths
    local: bool
    prefix: str = ""  # what a path on the filesystem is shown with ("s3://")

    def show(self, path: str) -> str:
        """A file of this location, as error messages and notes name it."""
        if not self.local:
            return self.prefix + path
        try:
            rel = os.path.relpath(path)
        except ValueError:  # another drive
            return path
        return path if rel.startswith("..") else rel


def locate(data: str | os.PathLike, name: str | None = None) -> Location:
    """Resolve a path or URL. Raises InputError for URLs that cannot be served."""
    text = os.fspath(data)
    name = name or text
    match = _URL.match(text) if isinstance(text, str) else None
    if match is None:
        return Location(name, pafs.LocalFileSystem(), os.path.abspath(text), local=True)
    scheme = match.group(1).lower()
    if scheme == "file":
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise InputError(name, f"file:// URL names another host ({parsed.netloc!r})")
        return Location(name, pafs.LocalFileSystem(), unquote(parsed.path), local=True)
    rest = text[match.end() :]
    if scheme in ("s3", "s3a"):
        return Location(name, _s3(name), rest.rstrip("/") or rest, False, "s3://")
    if scheme in ("gs", "gcs"):
        return Location(name, _gcs(name), rest.rstrip("/") or rest, False, f"{scheme}://")
    return _fsspec(text, scheme, name)


def _env(*names: str) -> str | None:
    for n in names:
        value = os.environ.get(n)
        if value:
            return value
    return None


def _s3(name: str):
    """pyarrow's S3 filesystem, configured by the standard AWS variables: credentials
    (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE) are read by the
    AWS SDK itself; the endpoint (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL: MinIO, moto, R2...) and
    the region (AWS_REGION, AWS_DEFAULT_REGION) are passed here."""
    kwargs: dict[str, Any] = {}
    endpoint = _env("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
    if endpoint:
        kwargs["endpoint_override"] = endpoint
        if endpoint.startswith("http://"):
            kwargs["scheme"] = "http"
    region = _env("AWS_REGION", "AWS_DEFAULT_REGION")
    if region:
        kwargs["region"] = region
    elif endpoint:
        kwargs["region"] = "us-east-1"  # a custom endpoint: no region lookup from AWS
    if (_env("AWS_NO_SIGN_REQUEST") or "").lower() in ("1", "true", "yes"):
        kwargs["anonymous"] = True
    try:
        return pafs.S3FileSystem(**kwargs)
    except (pa.ArrowException, OSError, ValueError, ImportError) as exc:
        raise InputError(name, f"cannot set up S3 access ({_problem(exc)})") from None


def _gcs(name: str):
    """pyarrow's GCS filesystem: credentials from GOOGLE_APPLICATION_CREDENTIALS (or the
    environment's default); STORAGE_EMULATOR_HOST points it at an emulator. The client retries
    for 15 minutes by default: a store (or, for the default credentials, a metadata server)
    that cannot be reached would hang the audit; this fails within about 25 s."""
    kwargs: dict[str, Any] = {"retry_time_limit": timedelta(seconds=_GCS_RETRY_SECONDS)}
    emulator = _env("STORAGE_EMULATOR_HOST")
    if emulator:
        parsed = urlparse(emulator if "://" in emulator else f"http://{emulator}")
        kwargs.update(endpoint_override=parsed.netloc, scheme=parsed.scheme, anonymous=True)
    try:
        return pafs.GcsFileSystem(**kwargs)
    except (pa.ArrowException, OSError, ValueError, ImportError) as exc:
        raise InputError(name, f"cannot set up GCS access ({_problem(exc)})") from None


def _fsspec(url: str, scheme: str, name: str) -> Location:
    try:
        import fsspec
    except ImportError:
        raise InputError(
            name,
            f"unsupported URL scheme {scheme!r}: datavet reads s3://, gs:// and file:// "
            "itself; for other stores install fsspec and its driver for that scheme",
        ) from None
    try:
        filesystem, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError, OSError) as exc:
        raise InputError(name, f"cannot open {scheme}:// URLs ({_problem(exc)})") from None
    wrapped = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    return Location(name, wrapped, path.rstrip("/") or path, False, f"{scheme}://")


# --------------------------------------------------------------------------------------------
# finding the files


@dataclass(frozen=True)
class FileRef:
    path: str  # on the location's filesystem
    label: str  # as messages name it
    size: int | None
    format: str | None


@dataclass(frozen=True)
class Found:
    location: Location
    files: tuple[FileRef, ...]
    base: str | None  # the directory partitions are read below; None: a single file named
    kind: str  # "file", "directory", "glob"
    notes: tuple[str, ...] = ()  # files left out, and why


@dataclass(frozen=True)
class _Entry:
    """A file a listing holds: its path, size and (local files) identity."""

    path: str
    size: int | None
    key: tuple[int, int] | None = None  # (st_dev, st_ino): one file under two names
    broken: bool = False  # a symbolic link to nothing
    linked: bool = False  # reached through a symbolic link (its real name is kept first)


def _info(loc: Location, path: str):
    try:
        return loc.filesystem.get_file_info(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(loc.name, f"cannot read ({_problem(exc)})") from None


def _listing(loc: Location, base: str, recursive: bool) -> list[_Entry]:
    try:
        infos = loc.filesystem.get_file_info(pafs.FileSelector(base, recursive=recursive))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(loc.name, f"cannot list ({_problem(exc)})") from None
    return [_Entry(i.path, i.size) for i in infos if i.type == pafs.FileType.File]


def _hidden(rel: str) -> bool:
    return any(part.startswith((".", "_")) for part in rel.split("/"))


def find(loc: Location) -> Found:
    """The files ``loc`` names, in sorted path order. Raises InputError when there are none."""
    if loc.local:
        return _find_local(loc)
    info = _info(loc, loc.path)
    if info.type == pafs.FileType.File:
        ref = FileRef(loc.path, loc.name, info.size, format_of(loc.path))
        return Found(loc, (ref,), None, "file")
    if info.type == pafs.FileType.Directory:
        base = loc.path.rstrip("/") or "/"
        return _directory(loc, base, _listing(loc, base, recursive=True), [])
    if is_glob(loc.path):
        base, pattern = split_glob(loc.path)
        base = base or "/"
        if _info(loc, base).type != pafs.FileType.Directory:
            raise InputError(loc.name, f"no files match: {loc.show(base)} is not a directory")
        entries = _listing(loc, base, recursive="/" in pattern or "**" in pattern)
        return _glob(loc, base, pattern, entries, [])
    raise InputError(loc.name, "no such file or directory (no object, prefix or bucket)")


def _find_local(loc: Location) -> Found:
    """A local path, listed by Python: names that are not UTF-8 are listed and read too."""
    try:
        st = os.stat(loc.path)
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        base = loc.path.rstrip("/") or "/"
        return _directory(loc, base, *_walk(loc, base, recursive=True, hidden=False))
    if st is not None:
        ref = FileRef(loc.path, loc.name, st.st_size, format_of(loc.path))
        return Found(loc, (ref,), None, "file")
    if not is_glob(loc.path):
        raise InputError(loc.name, "no such file or directory")
    base, pattern = split_glob(loc.path)
    base = base or "/"
    if not os.path.isdir(base):
        raise InputError(loc.name, f"no files match: {loc.show(base)} is not a directory")
    entries, notes = _walk(
        loc,
        base,
        recursive="/" in pattern or "**" in pattern,
        hidden=_explicit_hidden(pattern),
    )
    return _glob(loc, base, pattern, entries, notes)


def _walk(loc: Location, base: str, *, recursive: bool, hidden: bool):
    """The files below the local directory ``base`` and the notes on what was left out.

    Symbolic links are followed, but each directory is entered once: a link back to a directory
    already listed (a cycle, or a second name of one) is left out with a note, so no file is
    read twice. Linked directories are entered after every real one, so a directory is read
    under its real name (``latest -> year=2021`` sorts first, but the rows keep their
    ``year=2021`` partition value). A link that leads nowhere is listed as broken: whether it
    matters is up to the caller. Directories named ``.x``/``_x`` are entered only when
    ``hidden``."""
    entries: list[_Entry] = []
    notes: list[str] = []
    st = os.stat(base)
    entered = {(st.st_dev, st.st_ino)}
    stack: list[tuple[str, bool]] = [(base, False)]  # (folder, reached through a link)
    links: list[tuple[str, tuple[int, int]]] = []  # linked folders, entered last
    while stack or links:
        if stack:
            folder, linked = stack.pop()
        else:
            folder, key = links.pop(0)
            if key in entered:
                notes.append(
                    f"{loc.name}: left out {loc.show(folder)}, a symbolic link to "
                    f"{loc.show(os.path.realpath(folder))}, which is read already (a link "
                    "cycle or a second name for it): each file is read once"
                )
                continue
            entered.add(key)
            linked = True
        try:
            with os.scandir(folder) as listing:
                items = sorted(listing, key=lambda item: item.name)
        except OSError as exc:
            raise InputError(loc.show(folder), f"cannot list ({exc.strerror or exc})") from None
        folders = []
        for item in items:
            try:
                st = item.stat()  # through a symbolic link
            except OSError:
                if item.is_symlink():
                    entries.append(_Entry(item.path, None, broken=True))
                continue  # removed while listed
            key = (st.st_dev, st.st_ino)
            if stat.S_ISREG(st.st_mode):
                entries.append(
                    _Entry(item.path, st.st_size, key, linked=linked or item.is_symlink())
                )
                continue
            if not stat.S_ISDIR(st.st_mode) or not recursive:
                continue
            if not hidden and item.name.startswith((".", "_")):
                continue
            if item.is_symlink():
                links.append((item.path, key))
                continue
            if key in entered:  # a bind mount, or a real folder reached again through a link
                continue
            entered.add(key)
            folders.append((item.path, linked))
        stack.extend(reversed(folders))
    return entries, notes


def _explicit_hidden(pattern: str) -> bool:
    return bool(re.search(r"(^|/)[._]", pattern))


def _broken(loc: Location, path: str) -> InputError:
    try:
        target = f" to {os.readlink(path)}"
    except OSError:
        target = ""
    return InputError(
        loc.show(path),
        f"is a broken symbolic link{target}: its data is not here and would be left out "
        "(git-annex or DVC data not fetched yet? run 'git annex get' or 'dvc pull')",
    )


def _directory(loc: Location, base: str, entries: list[_Entry], notes: list[str]) -> Found:
    refs = []
    for entry in entries:
        rel = _relative(entry.path, base)
        if _hidden(rel):
            continue  # _SUCCESS, _metadata, .crc files, .ipynb_checkpoints
        kind = format_of(entry.path)
        if entry.broken:
            if kind in _FORMAT_NAMES or not Path(rel).suffix:
                raise _broken(loc, entry.path)
            continue
        if kind is None and not Path(rel).suffix:
            kind = _sniff(loc, entry.path)  # Hadoop-style part files with no extension
        if kind not in _FORMAT_NAMES:
            continue  # README.md, a .json sidecar, a pickle: not part of the table
        refs.append((entry, FileRef(entry.path, _join_label(loc.name, rel), entry.size, kind)))
    refs.sort(key=lambda r: _relative(r[1].path, base))
    if not refs:
        raise InputError(
            loc.name, "directory holds no Parquet files (nor CSV or Arrow/Feather files)"
        )
    return _found(loc, refs, base, "directory", notes)


def _glob(loc: Location, base: str, pattern: str, entries: list[_Entry], notes: list[str]) -> Found:
    regex = glob_regex(pattern)
    explicit_hidden = _explicit_hidden(pattern)
    refs = []
    for entry in entries:
        rel = _relative(entry.path, base)
        if not regex.fullmatch(rel) or (_hidden(rel) and not explicit_hidden):
            continue
        if entry.broken:
            raise _broken(loc, entry.path)
        kind = format_of(entry.path)
        if kind is None and not Path(rel).suffix:
            kind = _sniff(loc, entry.path)
        if kind == "pickle":
            raise InputError(
                loc.show(entry.path),
                "pickle files are refused: unpickling runs arbitrary code; "
                "save the table as Parquet or CSV",
            )
        if kind is None:
            raise InputError(
                loc.name,
                f"matches {loc.show(entry.path)}, which is not a Parquet, CSV or Arrow/Feather "
                "file; narrow the pattern (for example *.parquet)",
            )
        refs.append((entry, FileRef(entry.path, loc.show(entry.path), entry.size, kind)))
    refs.sort(key=lambda r: r[1].path)
    if not refs:
        raise InputError(loc.name, "no files match the pattern")
    return _found(loc, refs, base, "glob", notes)


def _found(
    loc: Location, refs: list[tuple[_Entry, FileRef]], base: str, kind: str, notes: list[str]
) -> Found:
    """The files to read, of one format. A second name of a file read already (a hard or
    symbolic link) is left out, and so is a 0-byte CSV file (Spark and Hadoop write one for an
    empty partition: it holds no rows), each with a note; a 0-byte Parquet or Arrow file is a
    failed write, and an error."""
    _one_format(loc, [ref for _, ref in refs])
    # one name per file: its real one (not reached through a link) where it has one
    kept: dict = {}
    for entry, ref in refs:
        if entry.key is not None and (entry.key not in kept or kept[entry.key][0] > entry.linked):
            kept[entry.key] = (entry.linked, ref.label)
    files, empty = [], []
    for entry, ref in refs:
        if entry.key is not None and kept[entry.key][1] != ref.label:
            notes.append(
                f"{loc.name}: left out {ref.label}, another name for {kept[entry.key][1]}: "
                "each file is read once"
            )
            continue
        if ref.size == 0 and ref.format == "csv":
            empty.append(ref.label)
        elif ref.size == 0:
            raise InputError(ref.label, "file is empty (0 bytes)")
        else:
            files.append(ref)
    if not files:
        raise InputError(empty[0], "file is empty (0 bytes)")
    if empty:
        shown = ", ".join(empty[:3]) + (f" (+{len(empty) - 3} more)" if len(empty) > 3 else "")
        notes.append(
            f"{loc.name}: left out {len(empty)} empty CSV file{'s' if len(empty) > 1 else ''} "
            f"(0 bytes: no header, no rows, as Spark writes for an empty partition): {shown}"
        )
    return Found(loc, tuple(files), base, kind, tuple(notes))


def _relative(path: str, base: str) -> str:
    base = base.rstrip("/")
    return path[len(base) + 1 :] if base and path.startswith(base + "/") else path.lstrip("/")


def _join_label(name: str, rel: str) -> str:
    return name.rstrip("/") + "/" + rel


def _sniff(loc: Location, path: str) -> str | None:
    try:
        with open_input(loc.filesystem, path, stream=True) as fh:
            return format_of_bytes(fh.read(6))
    except (pa.ArrowException, OSError, ValueError):
        return None


def _one_format(loc: Location, refs: list[FileRef]) -> None:
    kinds: dict[str, list[FileRef]] = {}
    for r in refs:
        kinds.setdefault(r.format, []).append(r)
    if len(kinds) > 1:
        counts = ", ".join(
            f"{len(v)} {_FORMAT_NAMES[k]} (e.g. {v[0].label})" for k, v in sorted(kinds.items())
        )
        raise InputError(
            loc.name,
            f"mixes file formats: {counts}; point datavet at one format, for example a glob "
            "such as 'DIR/**/*.parquet'",
        )


# --------------------------------------------------------------------------------------------
# partitions


def partitions(found: Found) -> tuple[pa.Schema, list[dict[str, Any]]]:
    """Hive partition columns (``site=A`` directories) discovered by ``pyarrow.dataset`` below
    the dataset's base directory: their schema and each file's values (None when absent)."""
    if found.base is None:
        return pa.schema([]), [{} for _ in found.files]
    import pyarrow.dataset as ds

    paths = [arrow_path(r.path) for r in found.files]  # names only: no file is opened
    try:
        options = ds.FileSystemFactoryOptions(
            partition_base_dir=arrow_path(found.base), partitioning=ds.HivePartitioning.discover()
        )
        factory = ds.FileSystemDatasetFactory(
            found.location.filesystem, paths, ds.IpcFileFormat(), options
        )
        schema = factory.inspect(fragments=0)  # the partition fields only: reads no file
        dataset = factory.finish(schema)
        values = {
            frag.path: ds.get_partition_keys(frag.partition_expression)
            for frag in dataset.get_fragments()
        }
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(
            found.location.name, f"cannot read the partition directories ({_problem(exc)})"
        ) from None
    return schema, [{f.name: values.get(p, {}).get(f.name) for f in schema} for p in paths]


# --------------------------------------------------------------------------------------------
# schemas across files


def without_pandas_index(
    name: str, named: list[tuple[str, pa.Schema]]
) -> tuple[list[tuple[str, pa.Schema]], str | None]:
    """Several files: pandas' stored index (``__index_level_N__``) left out of each file's
    schema, with a note. ``to_parquet()`` writes it only where the index is not a plain range
    (after a shuffle or a filter), so some part files hold it and others do not; it numbers one
    file's rows and describes nothing, as for a single file (where the scan leaves it out)."""
    if len(named) < 2:
        return named, None
    dropped = sorted({n for _, s in named for n in s.names if _PANDAS_INDEX.fullmatch(n)})
    if not dropped:
        return named, None
    holding = sum(1 for _, s in named if any(n in s.names for n in dropped))
    note = (
        f"{name}: left out {', '.join(map(repr, dropped))} ({holding} of {len(named)} files): "
        "the row index pandas writes with the data (to_parquet() without index=False); it "
        "numbers rows, it is no feature"
    )
    kept = [
        (label, pa.schema([f for f in s if f.name not in dropped], metadata=_no_pandas(s)))
        for label, s in named
    ]
    return kept, note


def _no_pandas(schema: pa.Schema) -> dict | None:
    """The schema's metadata less pandas' own, which names the index columns left out."""
    if not schema.metadata:
        return schema.metadata
    return {k: v for k, v in schema.metadata.items() if k != b"pandas"}


def unify_schemas(named: list[tuple[str, pa.Schema]], *, text_fallback: bool = False) -> pa.Schema:
    """One schema for the files of a dataset. The files must hold the same columns (in any
    order); types are promoted where no value changes (int32 -> int64, int -> float, null ->
    anything, dictionary -> its values); otherwise a one-line InputError names both files.
    ``text_fallback`` (CSV, whose types are guesses): columns that do not unify are read as text.
    """
    first_label, first = named[0]
    for label, schema in named:
        _no_duplicates(label, schema)
        if set(schema.names) != set(first.names):
            raise InputError(
                label, f"schema differs from {first_label} ({_schema_diff(first, schema)})"
            )
    fields = []
    for f in first:
        types = [(label, s.field(f.name).type) for label, s in named]
        fields.append(pa.field(f.name, _common_type(f.name, types, text_fallback)))
    return pa.schema(fields, metadata=first.metadata)


def _no_duplicates(label: str, schema: pa.Schema) -> None:
    seen = set()
    for n in schema.names:
        if n in seen:
            raise InputError(label, f"duplicate column name {n!r}")
        seen.add(n)


def _common_type(name: str, types: list[tuple[str, pa.DataType]], text: bool) -> pa.DataType:
    distinct = {t for _, t in types}
    if len(distinct) == 1:
        return types[0][1]
    if text and {pa.int64(), pa.uint64()} <= distinct:
        # IDs beyond int64 in some CSV files only: permissive promotion would pick int64, which
        # cannot hold them; text holds every value exactly
        return pa.string()
    # permissive promotion; a dictionary column unifies with plain ones as its values' type
    for candidates in (
        distinct,
        {t.value_type if pa.types.is_dictionary(t) else t for t in distinct},
    ):
        if len(candidates) == 1:
            return next(iter(candidates))
        try:
            merged = pa.unify_schemas(
                [pa.schema([pa.field(name, t)]) for t in candidates], promote_options="permissive"
            )
            return merged.field(name).type
        except (pa.ArrowException, TypeError, ValueError):
            continue
    if text:
        return pa.string()
    (la, ta), (lb, tb) = types[0], next(lt for lt in types if lt[1] != types[0][1])
    raise InputError(lb, f"column {name!r} is {tb} here but {ta} in {la}; the types do not unify")


def _schema_diff(a: pa.Schema, b: pa.Schema) -> str:
    parts = []
    only_a = [n for n in a.names if n not in b.names]
    only_b = [n for n in b.names if n not in a.names]
    if only_a:
        parts.append("missing " + ", ".join(map(repr, only_a)))
    if only_b:
        parts.append("extra " + ", ".join(map(repr, only_b)))
    return "; ".join(parts) or "field metadata differs"


def with_partitions(label: str, schema: pa.Schema, partition_schema: pa.Schema) -> pa.Schema:
    """The file columns followed by the partition columns; a name in both is refused."""
    both = [n for n in partition_schema.names if n in schema.names]
    if both:
        raise InputError(
            label,
            f"partition column {both[0]!r} (from the directory names) is also a column in the "
            "files; rename one of them",
        )
    return pa.schema(list(schema) + list(partition_schema), metadata=schema.metadata)


class Conform:
    """Bring one file's batches to the dataset schema: its columns in the dataset's order and
    types, and the file's partition values as constant columns."""

    def __init__(self, label: str, schema: pa.Schema, values: dict[str, Any]):
        self.label = label
        self.schema = schema
        self.values = values
        self._constants: dict[str, pa.Array] = {}
        self._same: pa.Schema | None = None  # a batch schema that needs no change

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if self._same is not None and batch.schema is self._same:
            return batch
        if not self.values and batch.schema.equals(self.schema):
            self._same = batch.schema  # the common case: one file, or files alike
            return batch
        n = batch.num_rows
        arrays = []
        for f in self.schema:
            if f.name in self.values:
                arrays.append(self._constant(f, n))
                continue
            col = batch.column(f.name)
            if col.type != f.type:
                try:
                    col = col.cast(f.type)
                except (pa.ArrowException, ValueError) as exc:
                    raise InputError(
                        self.label,
                        f"column {f.name!r} cannot be read as {f.type} ({_problem(exc)})",
                    ) from None
            arrays.append(col)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _constant(self, f: pa.Field, n: int) -> pa.Array:
        cached = self._constants.get(f.name)
        if cached is None or len(cached) < n:
            cached = pa.repeat(pa.scalar(self.values[f.name], f.type), max(n, 1024))
            self._constants[f.name] = cached
        return cached.slice(0, n)


def order_note(name: str, labels: list[str], what: str) -> str | None:
    if len(labels) < 2:
        return None
    return (
        f"{name}: rows of {len(labels)} {what} files taken in file path order (sorted by path, "
        "then each file's own order); positional checks (L002, B004) assume this order, and no "
        "sort key says it is the data's own"
    )


# --------------------------------------------------------------------------------------------
# several CSV or Arrow files as one table


@dataclass
class FileSetSource(TabularSource):
    """Several CSV or Arrow files (a directory, a glob) read one after the other in path order,
    each conformed to one schema, with the Hive partition values as columns."""

    children: list[TabularSource] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    partition_values: list[dict[str, Any]] = field(default_factory=list)
    partition_schema: pa.Schema = field(default_factory=lambda: pa.schema([]))
    text_fallback: bool = False
    notes: list[str] = field(default_factory=list)  # files or columns left out, and why

    def open(self) -> FileSetSource:
        self._unify()
        self.check_schema()
        if all(c.num_rows is not None for c in self.children) and self.format == "arrow":
            self.num_rows = sum(c.num_rows for c in self.children)
        return self

    def _unify(self) -> None:
        named, note = without_pandas_index(
            self.name, [(lbl, c.schema) for lbl, c in zip(self.labels, self.children)]
        )
        if note and note not in self.notes:
            self.notes.append(note)
        files = unify_schemas(named, text_fallback=self.text_fallback)
        self.schema = with_partitions(self.labels[0], files, self.partition_schema)

    @property
    def order_note(self) -> str | None:
        return order_note(self.name, self.labels, _FORMAT_NAMES.get(self.format, self.format))

    @property
    def read_note(self) -> str | None:
        """The files' own notes (a CSV delimiter sniffed or named), the first three of them."""
        notes = [n for n in (c.read_note for c in self.children) if n]
        if not notes:
            return None
        more = f" (+{len(notes) - 3} more files)" if len(notes) > 3 else ""
        return "; ".join(notes[:3]) + more

    def _iter_batches(self, batch_rows: int) -> Iterator[pa.RecordBatch]:
        for child, label, values in zip(self.children, self.labels, self.partition_values):
            conform = Conform(label, self.schema, values)
            try:
                for _, batch in child.batches(batch_rows):
                    yield conform(batch)
            except SchemaRestart:
                # a CSV file widened a column: read it that wide in every file from now on,
                # so each column restarts the scan at most twice, whatever the number of files
                self._unify()
                for name in self.schema.names:
                    wide = self.schema.field(name).type
                    for other in self.children:
                        types = getattr(other, "column_types", None)
                        if (
                            types is not None
                            and name in other.schema.names
                            and (other.schema.field(name).type != wide)
                        ):
                            types[name] = wide
                raise
