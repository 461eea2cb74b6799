# padrun as a prefix for every agent harness, in fish
# (save as ~/.config/fish/conf.d/padrun.fish).
function pi --wraps pi --description 'pi under padrun'
    padrun -- pi $argv
end
function claude --wraps claude --description 'claude under padrun'
    padrun -- claude $argv
end
function codex --wraps codex --description 'codex under padrun'
    padrun -- codex $argv
end
