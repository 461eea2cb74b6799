# Rewrites the old wait commands of a script to the forms of waitfor:
#   sed -i -f cmd/padrun/testdata/rewrite-waits.sed FILE.txtar...
# Only the script is changed, not the files after its first -- NAME -- line.
/^-- .* --$/,$b
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)await\([[:space:]]\)/\1waitfor exit\4/
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)waitfile\([[:space:]]\)/\1waitfor file\4/
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)waitgone\([[:space:]]\)/\1waitfor gone\4/
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)waitgrep\([[:space:]]\)/\1waitfor grep\4/
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)waitnewer\([[:space:]]\)/\1waitfor touch\4/
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)waitpane\([[:space:]]\)/\1waitfor pane\4/
s/^\([[:space:]]*\(\[[^]]*\][[:space:]]\{1,\}\)*\(![[:space:]]\{1,\}\)\{0,1\}\)gone\([[:space:]]\)/\1waitfor dead\4/
