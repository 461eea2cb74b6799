# padrun as a prefix for every agent harness, in fish
# (save as ~/.config/fish/conf.d/padrun.fish). 'command pi' runs pi bare.
function pi --wraps pi --description 'pi under padrun'
    padrun -- pi $argv
end
function claude --wraps claude --description 'claude under padrun'
    padrun -- claude $argv
end
function codex --wraps codex --description 'codex under padrun'
    padrun -- codex $argv
end
function gemini --wraps gemini --description 'gemini under padrun'
    padrun -- gemini $argv
end
function qwen --wraps qwen --description 'qwen under padrun'
    padrun -- qwen $argv
end
function copilot --wraps copilot --description 'copilot under padrun'
    padrun -- copilot $argv
end
function opencode --wraps opencode --description 'opencode under padrun'
    padrun -- opencode $argv
end
function kilo --wraps kilo --description 'kilo under padrun'
    padrun -- kilo $argv
end
function droid --wraps droid --description 'droid under padrun'
    padrun -- droid $argv
end
function omp --wraps omp --description 'omp under padrun'
    padrun -- omp $argv
end
function cline --wraps cline --description 'cline under padrun'
    padrun -- cline $argv
end
