# Sourced by the GPU scripts under tools/: the Vulkan/GL loaders a lent GPU
# machine lacks, downloaded here as .debs into .gl/ and unpacked there.

# Here: ignore .gpu/ and .gl/, and fetch the loader packages once.
device_gl_prepare() {
    grep -qsx '/.gpu/' .git/info/exclude || echo /.gpu/ >> .git/info/exclude
    grep -qsx '/.gl/' .git/info/exclude || echo /.gl/ >> .git/info/exclude
    if [ ! -d .gl ] || ! ls .gl/libvulkan1*.deb > /dev/null 2>&1; then
        mkdir -p .gl /tmp/amd64/partial
        local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
        # shellcheck disable=SC2086
        apt-get $o update > /dev/null
        # shellcheck disable=SC2086
        (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 > /dev/null)
    fi
}

# There: unpack the loaders if the machine has none, and point Vulkan at NVIDIA's driver.
device_gl_load() {
    if ! ldconfig -p | grep -q libvulkan && ls .gl/*.deb > /dev/null 2>&1; then
        for f in .gl/*.deb; do dpkg -x "$f" /; done
        ldconfig
    fi
    if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
        export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    fi
    export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
}

# Here: the dev-profile `proprio`, stripped and xz'd into .gpu/ (a device call
# carries 64 MiB of files), and the loaders.
device_proprio_prepare() {
    cargo build --locked --bin proprio
    mkdir -p .gpu
    strip -s -o .gpu/proprio target/debug/proprio
    xz -9 -T0 -f .gpu/proprio
    device_gl_prepare
    du -sh .gpu .gl
}

# There: the loaders, then the prepared `proprio` unpacked to /tmp/proprio
# (this checkout's own build where none was prepared); sets BIN to it and
# OUTDIR ($OUT, or a new folder), and prints the machine the figures come from.
device_proprio_load() {
    device_gl_load
    BIN=target/debug/proprio
    if [ -f .gpu/proprio.xz ]; then
        python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' .gpu/proprio.xz /tmp/proprio
        chmod +x /tmp/proprio
        BIN=/tmp/proprio
    fi
    OUTDIR=${OUT:-$(mktemp -d)}
    echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo 'no NVIDIA GPU'); $(date -u '+%F %H:%M UTC')"
}
