# Shared by scripts/app and scripts/test: a project virtualenv in .venv, with the packages of a
# requirements file installed, re-installed only when that file changes.
ensure_venv() {
    requirements="$1"
    if [ ! -x .venv/bin/python ]; then
        echo "creating .venv…"
        python3 -m venv .venv
    fi
    stamp=".venv/.installed-$(basename "$requirements")"
    wanted="$(cat "$requirements" requirements.txt | sha256sum | cut -c1-16)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
        echo "installing $requirements into .venv…"
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
        echo "$wanted" > "$stamp"
    fi
}
