# bash completion for leakgate (and the Python package's leakgate-dsl). Source it, or install it as
# share/bash-completion/completions/leakgate (cmake --install does). The option lists are
# leakgate's own: tests/integration/test_completion.py checks them against `leakgate X --help`.
_leakgate_checks="decorate-sentinels decorate-frame-cycle decorate-retained-frame decorate-device-memory
import-sentinels import-frame-cycle import-retained-frame import-device-memory launch-allocations
launch-net-blocks launch-cyclic-garbage values-encoding values-bounded soak-growth device-echo
device-allocations device-cyclic-garbage decorations-cyclic-garbage decorations-retained launch-real-net-blocks launch-real-cyclic-garbage
launch-real-retained decorate import decorations launch launch-real values soak device probe"
_leakgate_rules="own-frame-local frame-stored closure-cycle frame-stored-static frame-stored-member frame-ref-leaked"

_leakgate() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local subcommand="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            scan|gate|lint|bisect|merge|repro) subcommand=${COMP_WORDS[i]}; break ;;
            cache) subcommand=cache
                   [[ $((i + 1)) -lt $COMP_CWORD ]] && subcommand="cache ${COMP_WORDS[i+1]}"; break ;;
        esac
    done
    local global="-h --help -v --verbose --version"
    local outputs="--json --junit --sarif --html --python --timeout -q --quiet --color --no-color"
    local options
    case $subcommand in
        "")     COMPREPLY=($(compgen -W "scan gate lint bisect merge repro cache $global" -- "$cur")); return ;;
        cache)  COMPREPLY=($(compgen -W "list prune -h --help" -- "$cur")); return ;;
        merge)  options="$global --json --junit --sarif --html -q --quiet --color --no-color" ;;
        repro)  options="$global --from --from-scan --from-gate --python --finding --release --target --out
                         --payload-bytes --verify-with --expect-leak --expect-clean --reduce
                         --reduce-seconds --timeout -q --quiet" ;;
        "cache list")  options="-h --help" ;;
        "cache prune") options="-h --help --keep-wheels --older-than" ;;
        scan)   options="$global $outputs -m --cycle-instances --cycle-bytes --held-entries --held-bytes --trace-sites" ;;
        gate)   options="$global $outputs --target --checks --sentinel-mib --device-sentinel-mib
                         --soak-steps --soak-seconds --soak-max-mib -j --jobs --baseline --budgets --launch-calls --launch-runs
                         --probe --lint --list-checks --distinct-values" ;;
        lint)   options="$global $outputs --compile-commands --cxx-flag -I --include --select --ignore
                         --exclude --site-packages-headers --config --no-config -j --jobs --fix --diff" ;;
        bisect) options="$global --package --versions --from --to --pre --extra --with --python -j --jobs --shard --installer --target --checks --probe
                         --json --junit --sarif --html
                         --timeout --soak-seconds --launch-calls --launch-runs --distinct-values
                         -q --quiet --color --no-color" ;;
    esac
    # repro's --from is a report file; bisect's a version.
    if [[ $subcommand == repro && $prev == --from ]]; then
        COMPREPLY=($(compgen -f -- "$cur")); return
    fi
    case $prev in
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --checks)
            # A comma-separated list: complete its last item.
            local done=${cur%"${cur##*,}"}
            COMPREPLY=($(compgen -P "$done" -W "$_leakgate_checks" -- "${cur##*,}")); return ;;
        --select|--ignore)
            local done=${cur%"${cur##*,}"}
            COMPREPLY=($(compgen -P "$done" -W "$_leakgate_rules" -- "${cur##*,}")); return ;;
        --target) COMPREPLY=($(compgen -W "reference cute triton cupy jax warp numba-cuda taichi cuda-tile torch" -- "$cur") $(compgen -f -- "$cur")); return ;;
        --installer) COMPREPLY=($(compgen -W "auto uv pip" -- "$cur")); return ;;
        --json|--junit|--sarif|--html|--baseline|--budgets|--probe|--compile-commands|--python|-I|--include|--config|\
        --out|--verify-with|--expect-leak|--expect-clean)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --timeout|--sentinel-mib|--device-sentinel-mib|--soak-steps|--soak-seconds|--soak-max-mib|--launch-calls|\
        --launch-runs|--distinct-values|--package|--versions|--from|--to|--finding|--release|--payload-bytes|--extra|--with|--older-than|-j|--jobs|--shard|--cxx-flag|-m|--exclude)
            return ;; # a value of the user's
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _leakgate leakgate leakgate-dsl
