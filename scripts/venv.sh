# Shared by scripts/app and scripts/test: a project virtualenv in .venv with the packages of a
# requirements file installed, re-installed only when that file (or requirements.txt) changes.
_stamp_value() {
    # every requirements file: one pulls others in with -r (requirements-dask.txt, requirements-anthropic.txt),
    # and a change to any of them must install again
    cat "$1" requirements*.txt | sha256sum | cut -c1-16
}

ensure_venv() {
    requirements="$1"
    if [ ! -x .venv/bin/python ]; then
        echo "creating .venv…"
        python3 -m venv .venv
    fi
    stamp=".venv/.installed-$(basename "$requirements")"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(_stamp_value "$requirements")" ]; then
        echo "installing $requirements into .venv…"
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
        _stamp_value "$requirements" > "$stamp"
        # requirements-dev.txt includes requirements.txt: the app's packages are in too.
        _stamp_value requirements.txt > .venv/.installed-requirements.txt
    fi
}
