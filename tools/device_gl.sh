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
