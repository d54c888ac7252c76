"""Finding the runs in a corpus: files, folders (recursively), globs, ``.zip`` and ``.tar.gz``
archives and ``.gz`` files, as a stream of ``Source`` values, one per candidate run.

A ``Source`` is small and picklable: a path (and, for a zip, the member's name), so a worker —
on this machine or a Dask cluster — reads the bytes itself. A ``.tar.gz`` cannot be read at an
arbitrary member without decompressing everything before it, so its members travel as bytes,
read here one at a time. Nothing is loaded whole: the finder yields as it walks, and a worker
holds one run at a time. Files that are not conversation logs are yielded as ``Skipped`` with
the reason; an archive that cannot be opened is a ``Failed`` with its located message.
"""

from __future__ import annotations

import glob
import gzip
import io
import os
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import limits
from ..errors import InputError
from ..formats.containers import RUN_SUFFIXES, is_task_folder, task_roots

ARCHIVE = "!"  # "archive.zip!inner/path": a run inside an archive


@dataclass(frozen=True)
class Source:
    """One candidate run: ``name`` is how results name it (``archive.zip!inner/path`` inside an
    archive); ``path`` the file on disk; ``member`` the zip member to read; ``data`` the bytes
    themselves when they cannot be read again cheaply (a tar member, an upload)."""

    name: str
    path: str | None = None
    member: str | None = None
    data: bytes | None = None
    # a task folder, read as one conversation: on disk at ``path`` (``formats.read_path``), or in an
    # archive — ``files``, its members' bytes by their path inside it, or (a zip on disk) every
    # member under the folder ``member`` names
    folder: bool = False
    files: tuple[tuple[str, bytes], ...] | None = None

    def folder_files(self, limit_mb: int) -> dict[str, bytes] | None:
        """The files of a task folder inside an archive, by their path inside the folder (None: a
        folder on disk, which ``formats.read_path`` reads)."""
        if self.files is not None:
            return dict(self.files)
        if self.member is None:
            return None
        try:
            with zipfile.ZipFile(self.path) as archive:
                inside = [info for info in archive.infolist() if not info.is_dir() and _under(info.filename,
                                                                                              self.member)]
                limits.check_size(sum(info.file_size for info in inside), limit_mb)
                return {_inside(info.filename, self.member): archive.read(info) for info in inside}
        except (OSError, EOFError, zipfile.BadZipFile) as exc:
            raise InputError(f"cannot read it ({getattr(exc, 'strerror', None) or exc})") from None

    def read(self, limit_mb: int) -> bytes:
        """The run's bytes (a ``.gz`` decompressed), never more than ``limit_mb`` MB of them."""
        try:
            if self.data is not None:
                raw = self.data
                limits.check_size(len(raw), limit_mb)
            elif self.member is not None:
                with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as stream:
                    raw = limits.read_limited(stream, limit_mb, archive.getinfo(self.member).file_size)
            else:
                with open(self.path, "rb") as stream:
                    raw = limits.read_limited(stream, limit_mb, os.fstat(stream.fileno()).st_size)
            if _inner_name(self.name).endswith(".gz"):
                with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
                    raw = limits.read_limited(stream, limit_mb)
        except (OSError, EOFError, zipfile.BadZipFile, gzip.BadGzipFile) as exc:
            raise InputError(f"cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
        return raw


@dataclass(frozen=True)
class Skipped:
    source: str
    reason: str


@dataclass(frozen=True)
class Failed:
    source: str
    message: str


Found = Source | Skipped | Failed


def _under(name: str, root: str) -> bool:
    return not root or name.startswith(f"{root}/")


def _inside(name: str, root: str) -> str:
    return name[len(root) + 1:] if root else name


def _inner_name(name: str) -> str:
    return name.rsplit(ARCHIVE, 1)[-1].lower()


def run_name(name: str) -> str | None:
    """Why ``name`` is not a run file (None: it may be one): by its extension, ``.gz`` looked through."""
    lower = _inner_name(name)
    if lower.endswith(".gz"):
        lower = lower[:-3]
    base = lower.rsplit("/", 1)[-1]
    if base.startswith("."):
        return "a hidden file"
    if not base.endswith(RUN_SUFFIXES):
        suffix = Path(base).suffix or "none"
        return f"not a conversation file (extension {suffix}; runs are {', '.join(RUN_SUFFIXES)}, or those .gz)"
    return None


def is_archive(name: str) -> bool:
    lower = name.lower()
    return lower.endswith((".zip", ".tar.gz", ".tgz", ".tar"))


def find(paths: Iterable[str], limit_mb: int | None = None) -> Iterator[Found]:
    """Every run under ``paths`` (files, folders walked in sorted order, globs, archives), as it is
    found. A path that matches nothing is a ``Failed`` naming it."""
    limit_mb = limit_mb or limits.max_input_mb()
    for given in paths:
        matches = sorted(glob.glob(given, recursive=True)) if glob.has_magic(given) else [given]
        if not matches:
            yield Failed(given, "no file matches this pattern")
        for path in matches:
            if os.path.isdir(path):
                yield from _walk(path, limit_mb)
            elif os.path.exists(path):
                yield from _file(path, limit_mb)
            else:
                yield Failed(path, "no such file or folder")


def _walk(top: str, limit_mb: int) -> Iterator[Found]:
    """A folder's runs in sorted order; a task folder (Cline, OpenHands, opencode) is one run."""
    if is_task_folder(Path(top)):
        yield Source(top, path=top, folder=True)
        return
    for folder, subfolders, files in os.walk(top):
        tasks = {name for name in subfolders if is_task_folder(Path(folder, name))}
        subfolders[:] = sorted(name for name in subfolders if name not in tasks)
        for name in sorted([*files, *tasks]):
            path = os.path.join(folder, name)
            if name in tasks:
                yield Source(path, path=path, folder=True)
            else:
                yield from _file(path, limit_mb)


def _file(path: str, limit_mb: int) -> Iterator[Found]:
    if is_archive(path):
        yield from members(path, limit_mb)
        return
    reason = run_name(path)
    yield Skipped(path, reason) if reason else Source(path, path=path)


def members(path: str, limit_mb: int, data: bytes | None = None, name: str | None = None) -> Iterator[Found]:
    """The runs inside one archive (on disk at ``path``, or its bytes ``data`` for an upload named
    ``name``): a zip member is read by the worker, a tar member is read here and sent as bytes."""
    name = name or path
    try:
        if name.lower().endswith(".zip"):
            yield from _zip_members(path, name, limit_mb, data)
        else:
            yield from _tar_members(path, name, limit_mb, data)
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, gzip.BadGzipFile) as exc:
        yield Failed(name, f"cannot open the archive ({getattr(exc, 'strerror', None) or exc})")


def _grouped(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The task folders among an archive's members (``formats.containers.task_roots``, the rule a
    folder on disk is read by) and, for each member inside one, its folder."""
    roots = task_roots(names)
    return roots, {member: root for member in names for root in roots if _under(member, root)}


def _folder_name(name: str, root: str) -> str:
    return f"{name}{ARCHIVE}{root}/" if root else name


def _zip_members(path: str, name: str, limit_mb: int, data: bytes | None) -> Iterator[Found]:
    with zipfile.ZipFile(io.BytesIO(data) if data is not None else path) as archive:
        infos = [info for info in archive.infolist() if not info.is_dir()]
        roots, folder_of = _grouped([info.filename for info in infos])
        for root in roots:  # each task folder is one run, as a folder on disk or a zip of one is
            if data is None:
                yield Source(_folder_name(name, root), path=path, member=root, folder=True)
                continue
            inside = [info for info in infos if folder_of.get(info.filename) == root]
            try:
                limits.check_size(sum(info.file_size for info in inside), limit_mb)
            except InputError as exc:
                yield Failed(_folder_name(name, root), str(exc))
                continue
            yield Source(_folder_name(name, root), folder=True, files=tuple(
                (_inside(info.filename, root), archive.read(info)) for info in inside))
        for info in infos:
            if info.filename in folder_of:
                continue
            inner = f"{name}{ARCHIVE}{info.filename}"
            reason = run_name(info.filename)
            if reason:
                yield Skipped(inner, reason)
            elif data is not None:
                with archive.open(info) as stream:
                    try:
                        yield Source(inner, data=limits.read_limited(stream, limit_mb, info.file_size))
                    except InputError as exc:
                        yield Failed(inner, str(exc))
            else:
                yield Source(inner, path=path, member=info.filename)


def _tar_members(path: str, name: str, limit_mb: int, data: bytes | None) -> Iterator[Found]:
    def opened() -> tarfile.TarFile:
        return tarfile.open(fileobj=io.BytesIO(data)) if data is not None else tarfile.open(path)

    with opened() as archive:  # a first pass over the names alone finds the task folders
        roots, folder_of = _grouped([info.name for info in archive if info.isfile()])
    folders: dict[str, list[tuple[str, bytes]]] = {root: [] for root in roots}
    sizes = dict.fromkeys(roots, 0)
    with opened() as archive:
        for info in archive:  # streamed: one member's bytes at a time
            if not info.isfile():
                continue
            inner = f"{name}{ARCHIVE}{info.name}"
            root = folder_of.get(info.name)
            if root is not None and root not in folders:  # its folder is over the limit, already said
                continue
            reason = None if root is not None else run_name(info.name)
            if reason:
                yield Skipped(inner, reason)
                continue
            try:
                limits.check_size(info.size + (sizes[root] if root is not None else 0), limit_mb)
            except InputError as exc:
                yield Failed(inner if root is None else _folder_name(name, root), str(exc))
                if root is not None:
                    folders.pop(root, None)
                continue
            stream = archive.extractfile(info)
            body = stream.read() if stream else b""
            if root is None:
                yield Source(inner, data=body)
            elif root in folders:
                sizes[root] += info.size
                folders[root].append((_inside(info.name, root), body))
    for root, files in folders.items():
        yield Source(_folder_name(name, root), folder=True, files=tuple(files))


def uploaded(name: str, data: bytes, limit_mb: int) -> Iterator[Found]:
    """The runs in one uploaded file (the page's): an archive's members, or the file itself."""
    if is_archive(name):
        yield from members(name, limit_mb, data=data, name=name)
        return
    reason = run_name(name)
    yield Skipped(name, reason) if reason else Source(name, data=data)
