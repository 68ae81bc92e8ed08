// CodeMirror 6 set-up shared by the GLUE editor and the diff: the language
// for each GLUE type (XXL-JOB's: shell, python, python2, nodejs, php, powershell)
import { StreamLanguage } from '@codemirror/language'
import { shell } from '@codemirror/legacy-modes/mode/shell'
import { powerShell } from '@codemirror/legacy-modes/mode/powershell'
import { python } from '@codemirror/lang-python'
import { javascript } from '@codemirror/lang-javascript'
import { php } from '@codemirror/lang-php'

export function languageFor(glueType) {
  switch (glueType) {
    case 'GLUE_SHELL': return StreamLanguage.define(shell)
    case 'GLUE_PYTHON':
    case 'GLUE_PYTHON2': return python()
    case 'GLUE_NODEJS': return javascript()
    case 'GLUE_PHP': return php({ plain: false })
    case 'GLUE_POWERSHELL': return StreamLanguage.define(powerShell)
    default: return []
  }
}
